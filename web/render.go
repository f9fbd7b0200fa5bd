package web

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/internal/buildinfo"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// view is what every page's template gets: the layout's parts and the
// page's own data.
type view struct {
	Title string
	Nav   string // the section highlighted in the menu
	Self  *stratov1.MetaStatusResponse
	// SelfErr: this replica did not answer for itself.
	SelfErr string
	// User signed in (Options.Login), or "".
	User string
	Data any
}

var funcs = template.FuncMap{
	// build is the running build (the footer's version and commit).
	"build": buildinfo.Get,
	"bytes": func(n any) string {
		switch n := n.(type) {
		case int64:
			return bytesize.Format(n)
		case int32:
			return bytesize.Format(int64(n))
		case int:
			return bytesize.Format(int64(n))
		}
		return fmt.Sprint(n)
	},
	"du": func(on bool) string {
		if on {
			return "1"
		}
		return ""
	},
	"pct": func(part, whole int64) string {
		if whole <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
	},
	// pctw is a CSS width.
	"pctw": func(part, whole int64) string {
		if whole <= 0 {
			return "0%"
		}
		return fmt.Sprintf("%.1f%%", min(100*float64(part)/float64(whole), 100))
	},
	"fraction": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"ms": func(ms int64) string {
		if ms == 0 {
			return "–"
		}
		return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"ago": func(ms int64) string {
		if ms == 0 {
			return "never"
		}
		d := time.Since(time.UnixMilli(ms)).Round(100 * time.Millisecond)
		if d < 0 {
			d = 0
		}
		return d.String() + " ago"
	},
	"health":      func(h stratov1.NodeHealth) string { return enumName(h.String(), "NODE_") },
	"opstate":     func(s stratov1.NodeOpState) string { return enumName(s.String(), "NODE_") },
	"rack":        func(r string) string { return cmp.Or(r, "/default-rack") },
	"cstate":      func(s stratov1.ContainerState) string { return enumName(s.String(), "CONTAINER_") },
	"pstate":      func(s stratov1.PipelineState) string { return enumName(s.String(), "PIPELINE_") },
	"vstate":      volumeState,
	"replication": func(r stratov1.ReplicationFactor) string { return enumName(r.String(), "REPLICATION_") },
	"layout":      func(l stratov1.BucketLayout) string { return enumName(l.String(), "LAYOUT_") },
	"checksum":    func(t stratov1.ChecksumType) string { return enumName(t.String(), "CHECKSUM_") },
	"lower":       strings.ToLower,
	"quota": func(n int64) string {
		if n == 0 {
			return "none"
		}
		return fmt.Sprint(n)
	},
	"quotaBytes": func(n int64) string {
		if n == 0 {
			return "none"
		}
		return bytesize.Format(n)
	},
	// path escapes each segment of a slash-separated path for a URL.
	"path": func(p string) string {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		return strings.Join(segs, "/")
	},
	"query": func(kv ...string) template.URL {
		q := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] != "" {
				q.Set(kv[i], kv[i+1])
			}
		}
		if len(q) == 0 {
			return ""
		}
		return template.URL("?" + q.Encode())
	},
	"str": func(v any) string { return fmt.Sprint(v) },
}

// enumName is an enum value's name as the CLI prints it: without its
// prefix, "UNSPECIFIED" as "-".
func enumName(s, prefix string) string {
	s = strings.TrimPrefix(s, prefix)
	if strings.HasSuffix(s, "UNSPECIFIED") {
		return "-"
	}
	return s
}

// parsePages parses every page (templates/NAME.html but the layout) with
// the layout.
func parsePages() (map[string]*template.Template, error) {
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", f)
		if err != nil {
			return nil, fmt.Errorf("web: %s: %w", f, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes page with the layout, answering code. The page is
// rendered into memory first, so a template error is a clean 500 rather
// than half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, code int, page, title string, data any) {
	v := view{Title: title, Nav: page, Data: data, User: visitorName(r.Context())}
	if page != "login" {
		self, err := c.replicaStatus(r.Context(), c.opts.Meta)
		switch {
		case status.Code(err) == codes.PermissionDenied:
			// A visitor who is not an administrator: no replica status.
		case err != nil:
			v.SelfErr = errorText(err)
		default:
			v.Self = self
		}
	}
	var buf bytes.Buffer
	if err := c.pages[page].ExecuteTemplate(&buf, "layout", v); err != nil {
		c.opts.Logger.Error("web: template failed", "page", page, "err", err)
		http.Error(w, "internal error (logged)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// volumeState names a volume's health; a datanode of before reports none:
// its volumes were all healthy.
func volumeState(s stratov1.VolumeState) string {
	if s == stratov1.VolumeState_VOLUME_FAILED {
		return "FAILED"
	}
	return "HEALTHY"
}
