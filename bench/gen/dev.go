package gen

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/strato-io/strato/meta"
)

// Dev is a stopped `strato dev` directory opened for Run: its meta server,
// running in this process on the cluster's meta address, and its
// datanodes, of which only the directories are used.
type Dev struct {
	Meta      *meta.Server
	Datanodes []Datanode
}

// OpenDev opens the strato dev directory dir, whose cluster must be
// stopped: the layout is minicluster's (cluster.json with the addresses,
// meta/, and dn1/, dn2/, ... each with its datanode.id). Close releases it.
func OpenDev(dir string, logger *slog.Logger) (*Dev, error) {
	var st struct {
		Meta      string   `json:"meta"`
		Datanodes []string `json:"datanodes"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "cluster.json"))
	if err != nil {
		return nil, fmt.Errorf("bench gen: %s is not a strato dev directory (run strato dev there once): %w", dir, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("bench gen: %s/cluster.json: %w", dir, err)
	}
	d := &Dev{}
	for i, addr := range st.Datanodes {
		dnDir := filepath.Join(dir, fmt.Sprintf("dn%d", i+1))
		id, err := os.ReadFile(filepath.Join(dnDir, "datanode.id"))
		if err != nil {
			return nil, fmt.Errorf("bench gen: datanode %d: %w", i+1, err)
		}
		d.Datanodes = append(d.Datanodes, Datanode{ID: strings.TrimSpace(string(id)), Dir: dnDir, Addr: addr})
	}
	d.Meta, err = meta.Open(meta.Options{Dir: filepath.Join(dir, "meta"), Listen: st.Meta, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("bench gen: open meta (is strato dev stopped?): %w", err)
	}
	return d, nil
}

// Close stops the meta server.
func (d *Dev) Close() error { return d.Meta.Close() }
