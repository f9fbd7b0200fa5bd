package s3

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAuthErrorsAreAWSs: a malformed Authorization header or presigned
// query gets AWS's code and message (what SDKs and conformance suites
// match on).
func TestAuthErrorsAreAWSs(t *testing.T) {
	for _, tc := range []struct{ header, code, msg string }{
		{"invalid_header", "InvalidArgument", "Authorization header is invalid -- one and only one ' ' (space) required."},
		{"AWS keysig", "InvalidArgument", "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"},
		{"AWS key:", "InvalidArgument", "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"},
		{"AWS2-HMAC-SHA1 x", "InvalidArgument", "Unsupported Authorization Type"},
		{"AWS4-HMAC-SHA256 Credential=a/20250912/us-east-1/s3/aws4_request,Signature=ab", "AuthorizationHeaderMalformed",
			"The authorization header is malformed; the authorization header requires three components: Credential, SignedHeaders, and Signature."},
		{"AWS4-HMAC-SHA256 Credential=a/20250912/us-east-1/s3/aws4_request,SignedHeaders-host,Signature=ab", "AuthorizationHeaderMalformed",
			`The authorization header is malformed; the authorization component "SignedHeaders-host" is malformed.`},
		{"AWS4-HMAC-SHA256 Credential=a/20250912/us-east-1/s3/aws4_request,SignedHeaders=host,Foo=ab", "AuthorizationHeaderMalformed",
			"The authorization header is malformed; missing Signature."},
		{"AWS4-HMAC-SHA256 Credential=a/b/20250912/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=ab", "AuthorizationHeaderMalformed",
			`The authorization header is malformed; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`},
		{"AWS4-HMAC-SHA256 Credential=a/20250912/us-east-1/ec2/aws4_request,SignedHeaders=host,Signature=ab", "AuthorizationHeaderMalformed",
			`The authorization header is malformed; incorrect service "ec2". This endpoint belongs to "s3".`},
		{"AWS4-HMAC-SHA256 Credential=a/2025091/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=ab", "AuthorizationHeaderMalformed",
			`The authorization header is malformed; incorrect date format "2025091". This date in the credential must be in the format "yyyyMMdd".`},
	} {
		_, err := parseAuthorization(tc.header)
		var e *Error
		require.ErrorAs(t, err, &e, tc.header)
		require.Equal(t, tc.code, e.Code, tc.header)
		require.Equal(t, tc.msg, e.Message, tc.header)
	}
	q := url.Values{"X-Amz-Algorithm": {algorithm}, "X-Amz-Credential": {"a/20250912/us-east-1/s3/aws4_request"}, "X-Amz-Signature": {"ab"},
		"X-Amz-Date": {"20250912T000000Z"}, "X-Amz-SignedHeaders": {"host"}, "X-Amz-Expires": {"-1"}}
	_, err := parsePresigned(q)
	require.Equal(t, &Error{Code: "AuthorizationQueryParametersError", Status: 400, Message: "X-Amz-Expires must be non-negative"}, err)
	q.Del("X-Amz-Date")
	_, err = parsePresigned(q)
	require.ErrorIs(t, err, ErrAuthorizationQueryParametersError)
	require.Contains(t, err.Error(), "requires the X-Amz-Algorithm, X-Amz-Credential")
}
