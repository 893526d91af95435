package resource

import "bytes"

// yamlDoc is one document of a YAML stream and the line it starts on.
type yamlDoc struct {
	body []byte
	line int
}

// splitYAML cuts a YAML stream at separator lines: lines that are "---"
// followed by nothing but white space, the rule of the API machinery's
// YAMLReader (and so of kubectl). The bodies share data's backing array.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	start, startLine, line := 0, 1, 1
	for pos := 0; pos < len(data); line++ {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		if isSeparator(data[pos:next]) {
			docs = append(docs, yamlDoc{body: data[start:pos], line: startLine})
			start, startLine = next, line+1
		}
		pos = next
	}
	return append(docs, yamlDoc{body: data[start:], line: startLine})
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(bytes.TrimSpace(line[3:])) == 0
}
