package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListBlocksAndImportIndex round-trips the datanode-only messages of
// docs/wire.md §5.8 and checks what they refuse.
func TestListBlocksAndImportIndex(t *testing.T) {
	chunk := Chunk{Offset: 0, Length: 16, Checksums: exampleSums}
	two := Chunk{Offset: 16, Length: 16, Checksums: exampleSums}
	resp := &ListBlocksResponse{Layout: 1, BCSID: 9, ReplicaIndex: 4, More: true, Blocks: []ImportBlock{
		{LocalID: 42, Length: 16, BCSID: 9, Chunks: []Chunk{chunk}},
		{LocalID: 43, Length: 0, BCSID: 8, Chunks: []Chunk{}},
		{LocalID: 50, Length: 32, BCSID: 7, Chunks: []Chunk{chunk, two}},
	}}
	for _, m := range []Message{
		&ListBlocksRequest{ContainerID: 7, AfterLocalID: 41, Limit: 1024},
		resp,
		&ListBlocksResponse{Layout: 2, BCSID: 0},
		&ImportIndexRequest{ContainerID: 7, ReplicaIndex: 5},
		&ImportIndexResponse{},
	} {
		f, err := DecodeFrame(AppendFrame(nil, 3, m, nil))
		require.NoError(t, err, "%T", m)
		require.Equal(t, m.Type(), f.Header.Type)
		if r, ok := m.(*ListBlocksResponse); ok && len(r.Blocks) == 0 {
			r.Blocks = []ImportBlock{} // decoded as an empty slice
		}
		require.Equal(t, m, f.Msg, "%T", m)
	}
	require.Equal(t, len(resp.AppendPayload(nil)), resp.PayloadLen())
	require.Equal(t, "LIST_BLOCKS", TypeListBlocks.String())
	require.Equal(t, "IMPORT_INDEX", TypeImportIndex.String())
	require.True(t, TypeImportIndex.Known())

	refused := []struct {
		name string
		m    Message
	}{
		{"limit 0", &ListBlocksRequest{ContainerID: 7, Limit: 0}},
		{"limit over the maximum", &ListBlocksRequest{ContainerID: 7, Limit: MaxListBlocks + 1}},
		{"container 0", &ListBlocksRequest{ContainerID: 0, Limit: 1}},
		{"bad layout", &ListBlocksResponse{Layout: 3}},
		{"more without blocks", &ListBlocksResponse{Layout: 1, More: true}},
		{"block bcsID above the container's", &ListBlocksResponse{Layout: 1, BCSID: 1, Blocks: []ImportBlock{{LocalID: 1, BCSID: 2}}}},
		{"blocks out of order", &ListBlocksResponse{Layout: 1, Blocks: []ImportBlock{{LocalID: 2}, {LocalID: 1}}}},
		{"chunks that do not tile", &ListBlocksResponse{Layout: 1, BCSID: 9, Blocks: []ImportBlock{{LocalID: 1, Length: 16, Chunks: []Chunk{two}}}}},
		{"index 0", &ImportIndexRequest{ContainerID: 7}},
		{"import index of container 0", &ImportIndexRequest{ReplicaIndex: 1}},
	}
	for _, tc := range refused {
		_, err := DecodeFrame(AppendFrame(nil, 3, tc.m, nil))
		require.ErrorIs(t, err, CodeInvalidArgument, tc.name)
	}
}
