package ec

import (
	"fmt"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Proto is an erasure coding config as the API (stratov1.ErasureCoding)
// and meta's records (stratov1.ErasureCodingRecord) carry it.
type Proto interface {
	GetCodec() stratov1.ErasureCodec
	GetData() int32
	GetParity() int32
	GetCellSize() int32
}

// FromProto is the code of a carried config, validated: a cell size of 0
// is DefaultCellSize; a codec other than RS and XOR is ErrInvalidConfig.
func FromProto(p Proto) (Config, error) {
	c := Config{Data: int(p.GetData()), Parity: int(p.GetParity()), CellSize: int(p.GetCellSize())}
	if c.CellSize == 0 {
		c.CellSize = DefaultCellSize
	}
	switch p.GetCodec() {
	case stratov1.ErasureCodec_ERASURE_CODEC_RS:
		c.Codec = RS
	case stratov1.ErasureCodec_ERASURE_CODEC_XOR:
		c.Codec = XOR
	default:
		return Config{}, fmt.Errorf("%w: erasure codec %v (RS or XOR)", ErrInvalidConfig, p.GetCodec())
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ToProto is the API's form of c.
func ToProto(c Config) *stratov1.ErasureCoding {
	e := &stratov1.ErasureCoding{Data: int32(c.Data), Parity: int32(c.Parity), CellSize: int32(c.CellSize)}
	switch c.Codec {
	case RS:
		e.Codec = stratov1.ErasureCodec_ERASURE_CODEC_RS
	case XOR:
		e.Codec = stratov1.ErasureCodec_ERASURE_CODEC_XOR
	}
	return e
}
