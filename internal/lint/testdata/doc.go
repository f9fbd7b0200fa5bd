package wire

// Documented is documented.
func Documented() {}

func Undocumented() {} // line 6

type Frame struct{} // line 8: a line comment is no doc comment for a type

type Header struct{}

func (Header) Len() int { return 0 } // line 12

type reader struct{}

func (reader) Read() {} // an unexported type's method is not API

// Sizes of things, documented as a group.
const (
	A = 1
	B = 2
)

var C = 3 // line 24: a line comment documents it

var D = 4
