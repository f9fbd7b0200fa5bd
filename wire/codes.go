package wire

import (
	"errors"
	"fmt"
	"strconv"
)

// Code classifies an error response (docs/wire.md §6). A Code is itself an
// error, so that errors.Is(err, wire.CodeNotFound) matches an *Error that
// carries it, as syscall.Errno does for system errors.
type Code uint16

// Error codes. The numeric values are part of the protocol: never renumber.
const (
	CodeInvalidArgument    Code = 1
	CodeUnsupportedVersion Code = 2
	CodeUnsupportedType    Code = 3
	CodeProtocol           Code = 4
	CodeTooLarge           Code = 5
	CodeContainerNotFound  Code = 6
	CodeBlockNotFound      Code = 7
	CodeContainerNotOpen   Code = 8
	CodeBadState           Code = 9
	CodeChecksumMismatch   Code = 10
	CodeOverwrite          Code = 11
	CodeIncomplete         Code = 12
	CodeNoSpace            Code = 13
	CodeIO                 Code = 14
	CodeCorrupt            Code = 15
	CodeFollowerFailed     Code = 16
	CodeUnavailable        Code = 17
	CodeInternal           Code = 18
	CodeContainerExists    Code = 19
	// CodeAccessDenied: the request needs a block token this connection
	// did not present, or a TOKEN failed verification (docs/wire.md §5.9).
	CodeAccessDenied Code = 20
)

var codeNames = [...]string{
	CodeInvalidArgument:    "INVALID_ARGUMENT",
	CodeUnsupportedVersion: "UNSUPPORTED_VERSION",
	CodeUnsupportedType:    "UNSUPPORTED_TYPE",
	CodeProtocol:           "PROTOCOL_ERROR",
	CodeTooLarge:           "TOO_LARGE",
	CodeContainerNotFound:  "CONTAINER_NOT_FOUND",
	CodeBlockNotFound:      "BLOCK_NOT_FOUND",
	CodeContainerNotOpen:   "CONTAINER_NOT_OPEN",
	CodeBadState:           "BAD_STATE",
	CodeChecksumMismatch:   "CHECKSUM_MISMATCH",
	CodeOverwrite:          "OVERWRITE",
	CodeIncomplete:         "INCOMPLETE",
	CodeNoSpace:            "NO_SPACE",
	CodeIO:                 "IO_ERROR",
	CodeCorrupt:            "CORRUPT",
	CodeFollowerFailed:     "FOLLOWER_FAILED",
	CodeUnavailable:        "UNAVAILABLE",
	CodeInternal:           "INTERNAL",
	CodeContainerExists:    "CONTAINER_EXISTS",
	CodeAccessDenied:       "ACCESS_DENIED",
}

// String returns the code's name as docs/wire.md spells it.
func (c Code) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return "CODE_" + strconv.Itoa(int(c))
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return "wire: " + c.String() }

// Known reports whether c is one of the codes this package knows. A client
// treats an unknown code like CodeIO.
func (c Code) Known() bool { return int(c) < len(codeNames) && codeNames[c] != "" }

// Error is an error response: the typed header of an error frame, and the
// error a Conn returns for it. errors.Is(err, code) matches its Code.
type Error struct {
	Code Code
	// Message is human-readable detail.
	Message string
	// Failed lists the followers that failed a pipelined request, named as
	// in the request, with their own codes.
	Failed []FailedNode
}

// FailedNode is a follower that failed a pipelined request.
type FailedNode struct {
	Addr string
	Code Code
}

// Error is "wire: CODE", followed by the message when there is one.
func (e *Error) Error() string {
	if e.Message == "" {
		return "wire: " + e.Code.String()
	}
	return "wire: " + e.Code.String() + ": " + e.Message
}

// Is matches a Code target equal to e.Code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of the *Error in err's chain, or 0.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
