package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Config configures Run, the offline data generator (Ozone freon's
// cgdn/cgscm/cgom): closed containers written straight into datanode
// directories, and the matching containers and keys recorded in meta.
type Config struct {
	// Size is the data to generate (per copy).
	Size int64
	// ContainerSize is how much each container holds. Default 1 GiB.
	ContainerSize int64
	// BlockSize is the size of each block, and of each key (one block per
	// key). Default 256 MiB.
	BlockSize int64
	// Datanodes are the datanodes' (stopped) volume directories and IDs.
	Datanodes []Datanode
	// Volume and Bucket receive the keys gen/<container>-<block>; they
	// are created when missing.
	Volume, Bucket string
	// Progress gets a line per container.
	Progress io.Writer
}

// Datanode is one datanode's volume directory, identity and data
// address.
type Datanode struct {
	ID, Dir, Addr string
}

// Result is what Run produced.
type Result struct {
	Containers, Keys int
	Bytes            int64 // per copy
	Elapsed          time.Duration
}

// Run generates cfg.Size of keys at replication THREE: each container's
// three replicas go round-robin over the datanodes, its block files are
// written with valid CRC32C checksums through the datanode's own container
// store, and meta records the container (CLOSED) and one key per block.
// The datanodes must not be running; meta (srv) must be. A key's content is
// the same as `bench ockg` writes (keyput.Payload), so it can be verified.
func Run(ctx context.Context, cfg Config, srv *meta.Server, out io.Writer) (Result, error) {
	if cfg.ContainerSize == 0 {
		cfg.ContainerSize = 1 << 30
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 256 << 20
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	var res Result
	if len(cfg.Datanodes) < 3 {
		return res, errors.New("bench gen: replication THREE needs at least 3 datanodes")
	}
	if cfg.BlockSize > cfg.ContainerSize || cfg.BlockSize%(4<<20) != 0 {
		return res, errors.New("bench gen: the block size must be a multiple of 4 MiB and at most the container size")
	}
	if _, err := srv.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: cfg.Volume, Owner: "strato"}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return res, err
	}
	if _, err := srv.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: cfg.Volume, Name: cfg.Bucket, Owner: "strato",
		BlockSize: cfg.BlockSize}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return res, err
	}
	vols := make([]*container.Volume, len(cfg.Datanodes))
	defer func() {
		for _, v := range vols {
			if v != nil {
				_ = v.Close()
			}
		}
	}()
	for i, d := range cfg.Datanodes {
		v, err := container.OpenVolume(d.Dir, container.Options{DisableDirectIO: true})
		if err != nil {
			return res, fmt.Errorf("bench gen: datanode %s (is it stopped?): %w", d.ID, err)
		}
		vols[i] = v
	}
	payload := keyput.Payload(cfg.BlockSize)
	const chunk = 4 << 20
	sums := make([]checksum.Data, 0, cfg.BlockSize/chunk)
	for off := int64(0); off < cfg.BlockSize; off += chunk {
		n := min(chunk, cfg.BlockSize-off)
		p := payload[off%int64(len(payload)):]
		sums = append(sums, checksum.Compute(checksum.CRC32C, checksum.DefaultBytesPerChecksum, p[:n]))
	}
	blocksPer := int(cfg.ContainerSize / cfg.BlockSize)
	start := time.Now()
	for written, k := int64(0), 0; written < cfg.Size; k++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		nblocks := min(blocksPer, int((cfg.Size-written+cfg.BlockSize-1)/cfg.BlockSize))
		idx := []int{k % len(vols), (k + 1) % len(vols), (k + 2) % len(vols)}
		members := []string{cfg.Datanodes[idx[0]].ID, cfg.Datanodes[idx[1]].ID, cfg.Datanodes[idx[2]].ID}
		info, ids, err := srv.ImportContainer(ctx, stratov1.ReplicationFactor_REPLICATION_THREE, members, uint64(nblocks))
		if err != nil {
			return res, err
		}
		for _, i := range idx {
			if err := genContainer(vols[i], info.Id, ids.First, nblocks, cfg.BlockSize, payload, sums); err != nil {
				return res, fmt.Errorf("bench gen: container %d on %s: %w", info.Id, cfg.Datanodes[i].ID, err)
			}
		}
		pipeline := &stratov1.Pipeline{Id: info.PipelineId}
		for _, i := range idx {
			pipeline.Members = append(pipeline.Members, &stratov1.DatanodeDetails{Id: cfg.Datanodes[i].ID, DataAddr: cfg.Datanodes[i].Addr})
		}
		for b := range nblocks {
			bl := &stratov1.BlockLocation{BlockId: &stratov1.BlockID{ContainerId: info.Id, LocalId: ids.First + uint64(b)},
				Length: cfg.BlockSize, Pipeline: pipeline}
			key := fmt.Sprintf("gen/%d-%d", info.Id, b)
			if err := srv.ImportKey(ctx, cfg.Volume, cfg.Bucket, key, stratov1.ReplicationFactor_REPLICATION_THREE, []*stratov1.BlockLocation{bl}); err != nil {
				return res, fmt.Errorf("bench gen: key %s: %w", key, err)
			}
			res.Keys++
		}
		res.Containers++
		written += int64(nblocks) * cfg.BlockSize
		res.Bytes = written
		el := time.Since(start)
		fmt.Fprintf(cfg.Progress, "gen: %d containers, %s of %s, %.2f GB/s (x3 copies written)\n",
			res.Containers, bytesize.Format(written), bytesize.Format(cfg.Size), float64(3*written)/1e9/el.Seconds())
	}
	for _, v := range vols {
		if err := v.Close(); err != nil {
			return res, err
		}
	}
	vols = nil
	res.Elapsed = time.Since(start)
	fmt.Fprintf(out, "gen: %d containers, %d keys, %s per copy (%s on disk) in %.1f s: %.2f GB/s written\n",
		res.Containers, res.Keys, bytesize.Format(res.Bytes), bytesize.Format(3*res.Bytes), res.Elapsed.Seconds(),
		float64(3*res.Bytes)/1e9/res.Elapsed.Seconds())
	return res, nil
}

// genContainer writes one CLOSED replica: nblocks blocks of the payload.
func genContainer(v *container.Volume, id, firstLocal uint64, nblocks int, blockSize int64, payload []byte, sums []checksum.Data) error {
	c, err := v.Create(id, container.FilePerBlock)
	if err != nil {
		return err
	}
	const chunk = 4 << 20
	for b := range nblocks {
		local := firstLocal + uint64(b)
		for i, off := 0, int64(0); off < blockSize; i, off = i+1, off+chunk {
			n := min(chunk, blockSize-off)
			p := payload[off%int64(len(payload)):]
			if err := c.WriteChunk(local, off, p[:n], sums[i], container.WriteOptions{NoVerify: true}); err != nil {
				return err
			}
		}
		if _, err := c.PutBlock(local, blockSize, container.PutOptions{Final: true}); err != nil {
			return err
		}
	}
	return c.Close()
}
