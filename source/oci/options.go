package oci

import (
	"time"

	"github.com/go-logr/logr"

	"github.com/kubegitops/gitops/source"
)

// Media types of the layers Argo CD extracts by default
// (reposerver.oci.layer.media.types): an OCI image layer and a Helm
// chart's content layer, both gzipped tars.
const (
	MediaTypeImageLayer = "application/vnd.oci.image.layer.v1.tar+gzip"
	MediaTypeHelmLayer  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// MediaTypeHelmConfig is the config media type of a Helm chart
	// artifact: its content layer holds the chart under one top
	// directory, which the snapshot leaves out.
	MediaTypeHelmConfig = "application/vnd.cncf.helm.config.v1+json"
)

// Options configure a Source. Start from DefaultOptions.
type Options struct {
	// Timeout bounds every network request. Default 60 s.
	Timeout time.Duration
	// MaxManifestBytes bounds a manifest as downloaded. Default 4 MiB.
	MaxManifestBytes int64
	// MaxLayerBytes bounds the content layer as downloaded (compressed).
	// Default 64 MiB.
	MaxLayerBytes int64
	// MaxLayers bounds the layers of an artifact's manifest (Argo CD
	// allows 10). Default 10.
	MaxLayers int
	// Limits bound the content layer once extracted (Argo CD's
	// --oci-manifest-max-extracted-size is Limits.MaxTotalBytes).
	Limits Limits
	// MediaTypes are the layer media types extracted (Argo CD's
	// reposerver.oci.layer.media.types). An artifact must hold exactly
	// one content layer (a layer whose media type ends in tar+gzip,
	// tar.gzip or tar; a Helm chart's content layer for a chart), and its
	// media type must be listed. Default MediaTypeImageLayer and
	// MediaTypeHelmLayer.
	MediaTypes []string
	// PlainHTTP lets every registry be reached over plain HTTP; otherwise
	// only those whose credentials set InsecureOCIForceHTTP (Argo CD's
	// insecureOCIForceHttp) are. Default false.
	PlainHTTP bool
	// Policy, when set, restricts which URLs and addresses may be reached.
	Policy *source.URLPolicy
	// MaxCachedBytes bounds the extracted artifacts kept in memory, oldest
	// out first; a snapshot handed out stays valid. Default 256 MiB.
	MaxCachedBytes int64
	// Logger receives debug logs (V(1)); never credentials.
	Logger logr.Logger
}

// Limits bound an extracted content layer, as source/git bounds a tree
// and source/helmrepo a chart archive.
type Limits struct {
	// MaxTotalBytes bounds the bytes of all files. Default 64 MiB.
	MaxTotalBytes int64
	// MaxFileBytes bounds one file. Default 8 MiB.
	MaxFileBytes int64
	// MaxFiles bounds the number of entries. Default 10,000.
	MaxFiles int
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		Timeout:          60 * time.Second,
		MaxManifestBytes: 4 << 20,
		MaxLayerBytes:    64 << 20,
		MaxLayers:        10,
		Limits:           Limits{MaxTotalBytes: 64 << 20, MaxFileBytes: 8 << 20, MaxFiles: 10000},
		MediaTypes:       []string{MediaTypeImageLayer, MediaTypeHelmLayer},
		MaxCachedBytes:   256 << 20,
		Logger:           logr.Discard(),
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	if o.MaxManifestBytes <= 0 {
		o.MaxManifestBytes = d.MaxManifestBytes
	}
	if o.MaxLayerBytes <= 0 {
		o.MaxLayerBytes = d.MaxLayerBytes
	}
	if o.MaxLayers <= 0 {
		o.MaxLayers = d.MaxLayers
	}
	if o.Limits.MaxTotalBytes <= 0 {
		o.Limits.MaxTotalBytes = d.Limits.MaxTotalBytes
	}
	if o.Limits.MaxFileBytes <= 0 {
		o.Limits.MaxFileBytes = d.Limits.MaxFileBytes
	}
	if o.Limits.MaxFiles <= 0 {
		o.Limits.MaxFiles = d.Limits.MaxFiles
	}
	if len(o.MediaTypes) == 0 {
		o.MediaTypes = d.MediaTypes
	}
	if o.MaxCachedBytes <= 0 {
		o.MaxCachedBytes = d.MaxCachedBytes
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}
