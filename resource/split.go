package resource

import "bytes"

// Document is one document of a YAML stream: its bytes (sharing the
// stream's backing array) and the one-based line it starts on.
type Document struct {
	// Body is the document's YAML or JSON.
	Body []byte
	// Line is the line of the stream the document starts on, from 1.
	Line int
}

// SplitDocuments cuts a YAML stream at separator lines: lines that are "---"
// followed by nothing but white space, the rule of the API machinery's
// YAMLReader (and so of kubectl). Decode splits streams the same way.
func SplitDocuments(data []byte) []Document {
	return splitYAML(data)
}

func splitYAML(data []byte) []Document {
	var docs []Document
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		if isSeparator(data[pos:next]) {
			docs = append(docs, Document{Body: data[start:pos], Line: startLine})
			start, startLine = next, line+1
		}
		pos = next
	}
	return append(docs, Document{Body: data[start:], Line: startLine})
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(bytes.TrimSpace(line[3:])) == 0
}
