package s3

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
)

// Error is an S3 error: a code of the S3 API, its HTTP status and a message.
// Handlers return them; the gateway writes them as S3's XML error body.
type Error struct {
	Code    string
	Status  int
	Message string
	// Fields are more elements of the error body, as AWS sends them
	// (AWSAccessKeyId, ArgumentName, ...): name, value, name, value, ...
	Fields []string
}

// withFields is e with more elements in its body.
func withFields(e *Error, nameValues ...string) *Error {
	c := *e
	c.Fields = append(append([]string(nil), e.Fields...), nameValues...)
	return &c
}

func (e *Error) Error() string { return "s3: " + e.Code + ": " + e.Message }

// Is matches errors of the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func s3err(code string, status int, msg string) *Error {
	return &Error{Code: code, Status: status, Message: msg}
}

// The S3 errors the gateway answers (their default messages are AWS's).
var (
	ErrAccessDenied                      = s3err("AccessDenied", 403, "Access Denied")
	ErrAuthorizationHeaderMalformed      = s3err("AuthorizationHeaderMalformed", 400, "The authorization header is malformed")
	ErrAuthorizationQueryParametersError = s3err("AuthorizationQueryParametersError", 400, "Error parsing the X-Amz-Credential parameter")
	ErrBadDigest                         = s3err("BadDigest", 400, "The Content-MD5 you specified did not match what we received.")
	ErrInvalidRedirectLocation           = s3err("InvalidRedirectLocation", 400, "The website redirect location must have a prefix of 'http://' or 'https://' or '/'.")
	ErrBucketAlreadyOwnedByYou           = s3err("BucketAlreadyOwnedByYou", 409, "Your previous request to create the named bucket succeeded and you already own it.")
	ErrBucketNotEmpty                    = s3err("BucketNotEmpty", 409, "The bucket you tried to delete is not empty.")
	ErrEntityTooLarge                    = s3err("EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed object size.")
	ErrEntityTooSmall                    = s3err("EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed size")
	ErrIncompleteBody                    = s3err("IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header")
	ErrInternalError                     = s3err("InternalError", 500, "We encountered an internal error, please try again.")
	ErrInvalidAccessKeyID                = s3err("InvalidAccessKeyId", 403, "The AWS Access Key Id you provided does not exist in our records.")
	ErrInvalidArgument                   = s3err("InvalidArgument", 400, "Invalid Argument")
	ErrInvalidBucketName                 = s3err("InvalidBucketName", 400, "The specified bucket is not valid.")
	ErrInvalidDigest                     = s3err("InvalidDigest", 400, "The Content-Md5 you specified is not valid.")
	ErrInvalidObjectName                 = s3err("InvalidArgument", 400, "The specified key is not valid.")
	ErrInvalidPart                       = s3err("InvalidPart", 400, "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
	ErrInvalidPartOrder                  = s3err("InvalidPartOrder", 400, "The list of parts was not in ascending order. Parts must be ordered by part number.")
	ErrInvalidRange                      = s3err("InvalidRange", 416, "The requested range is not satisfiable")
	ErrInvalidRequest                    = s3err("InvalidRequest", 400, "Invalid Request")
	ErrMalformedXML                      = s3err("MalformedXML", 400, "The XML you provided was not well-formed or did not validate against our published schema.")
	ErrMethodNotAllowed                  = s3err("MethodNotAllowed", 405, "The specified method is not allowed against this resource.")
	ErrMissingContentLength              = s3err("MissingContentLength", 411, "You must provide the Content-Length HTTP header.")
	ErrNoSuchBucket                      = s3err("NoSuchBucket", 404, "The specified bucket does not exist.")
	ErrNoSuchKey                         = s3err("NoSuchKey", 404, "The specified key does not exist.")
	ErrNoSuchUpload                      = s3err("NoSuchUpload", 404, "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
	ErrNoSuchTagSet                      = s3err("NoSuchTagSet", 404, "The TagSet does not exist.")
	ErrNotImplemented                    = s3err("NotImplemented", 501, "A header you provided implies functionality that is not implemented.")
	ErrPreconditionFailed                = s3err("PreconditionFailed", 412, "At least one of the pre-conditions you specified did not hold.")
	ErrConditionalRequestConflict        = s3err("ConditionalRequestConflict", 409, "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part.")
	ErrQuotaExceeded                     = s3err("QuotaExceeded", 403, "The bucket's or volume's quota would be exceeded.")
	ErrRequestTimeTooSkewed              = s3err("RequestTimeTooSkewed", 403, "The difference between the request time and the current time is too large.")
	ErrServiceUnavailable                = s3err("ServiceUnavailable", 503, "Please reduce your request rate.")
	ErrSignatureDoesNotMatch             = s3err("SignatureDoesNotMatch", 403, "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	ErrXAmzContentSHA256Mismatch         = s3err("XAmzContentSHA256Mismatch", 400, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	ErrInvalidTag                        = s3err("InvalidTag", 400, "The TagKey you have provided is invalid")
	ErrKeyTooLong                        = s3err("KeyTooLongError", 400, "Your key is too long.")
	ErrMetadataTooLarge                  = s3err("MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size")
	ErrInvalidStorageClass               = s3err("InvalidStorageClass", 400, "The storage class you specified is not valid")
	errNotModified                       = s3err("NotModified", 304, "Not Modified")
	ErrMalformedTrailer                  = s3err("MalformedTrailerError", 400, "The request contained trailing data that was not well-formed or did not conform to our published schema.")
	ErrInvalidChunkSizeError             = s3err("InvalidChunkSizeError", 403, "Only the last chunk is allowed to have a size less than 8192 bytes")
	ErrInvalidLocationConstraint         = s3err("InvalidLocationConstraint", 400, "The specified location-constraint is not valid")
)

// errf is e with another message.
func errf(e *Error, format string, args ...any) *Error {
	return &Error{Code: e.Code, Status: e.Status, Message: fmt.Sprintf(format, args...), Fields: e.Fields}
}

// fromClient maps an error of the strato client to an S3 error; notFound is
// the error a missing key or file means (NoSuchKey, NoSuchUpload, ...).
func fromClient(err error, notFound *Error) *Error {
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return e
	case errors.Is(err, client.ErrBucketNotFound), errors.Is(err, client.ErrVolumeNotFound):
		return ErrNoSuchBucket
	case errors.Is(err, client.ErrNotFound):
		if notFound == nil {
			notFound = ErrNoSuchKey
		}
		return notFound
	case errors.Is(err, client.ErrBucketNotEmpty):
		return ErrBucketNotEmpty
	case errors.Is(err, client.ErrBucketExists):
		return ErrBucketAlreadyOwnedByYou
	case errors.Is(err, client.ErrExists):
		// A file or directory of an FSO bucket in the way of a key (a PUT
		// of "a/b/" where the object "a/b" is), as ErrPrecondition below.
		return errf(ErrInvalidRequest, "%s", metaMessage(err))
	case errors.Is(err, client.ErrQuota):
		return errf(ErrQuotaExceeded, "%s", metaMessage(err))
	case errors.Is(err, client.ErrInvalid):
		return errf(ErrInvalidArgument, "%s", metaMessage(err))
	case errors.Is(err, client.ErrObjectLocked):
		return ErrObjectLocked
	case errors.Is(err, client.ErrPrecondition):
		// A key name that clashes with a directory of an FSO bucket, ...
		return errf(ErrInvalidRequest, "%s", metaMessage(err))
	case errors.Is(err, client.ErrPermission):
		// meta refused the key's user (docs/s3.md, "Users and ACLs").
		return errf(ErrAccessDenied, "%s", metaMessage(err))
	case errors.Is(err, client.ErrUnavailable), errors.Is(err, client.ErrNoSpace):
		return errf(ErrServiceUnavailable, "%s", metaMessage(err))
	}
	return errf(ErrInternalError, "%s", metaMessage(err))
}

// metaMessage is the message of meta's answer without the gRPC wrapping
// and the package prefixes, which mean nothing to an S3 client.
func metaMessage(err error) string {
	msg := status.Convert(err).Message()
	for _, p := range []string{"namespace: ", "cluster: ", "meta: ", "client: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

type errorBody struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string
	Message   string
	Resource  string     `xml:",omitempty"`
	Fields    []xmlField `xml:",any"`
	RequestID string     `xml:"RequestId"`
}

type xmlField struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// writeError answers e; a HEAD gets the status alone.
func writeError(w http.ResponseWriter, r *http.Request, e *Error, requestID string) {
	w.Header().Set("x-amz-request-id", requestID)
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		w.WriteHeader(e.Status)
		return
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(xml.Header))
	b := errorBody{Code: e.Code, Message: e.Message, Resource: r.URL.Path, RequestID: requestID}
	for i := 0; i+1 < len(e.Fields); i += 2 {
		b.Fields = append(b.Fields, xmlField{XMLName: xml.Name{Local: e.Fields[i]}, Value: e.Fields[i+1]})
	}
	_ = xml.NewEncoder(w).Encode(b)
}
