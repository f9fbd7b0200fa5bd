package s3

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"hash/crc32"
	"net/http"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/zeebo/xxh3"
)

// The flexible checksums of S3 (x-amz-checksum-*): the algorithm names as
// headers spell them, lower case.
var checksumAlgorithms = []string{"crc32", "crc32c", "crc64nvme", "sha1", "sha256", "sha512", "md5", "xxhash64", "xxhash3", "xxhash128"}

func newChecksum(algo string) hash.Hash {
	switch algo {
	case "crc32":
		return crc32.NewIEEE()
	case "crc32c":
		return crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case "crc64nvme":
		return crc64nvme.New()
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	case "md5":
		return md5.New()
	case "xxhash64":
		return xxhash.New()
	case "xxhash3":
		return xxh3.New()
	case "xxhash128":
		return xxh3.New128()
	}
	return nil
}

func validAlgorithm(algo string) bool { return newChecksum(algo) != nil }

// checksumSchema checks a multipart upload's x-amz-checksum-type against
// its algorithm, as AWS does: COMPOSITE goes with crc32, crc32c, sha1 and
// sha256, sha512, md5 and the xxhashes (a checksum of the parts' checksums), FULL_OBJECT with the CRCs
// that combine (crc32, crc32c, crc64nvme).
func checksumSchema(typ, algo string) error {
	if typ == "" {
		return nil
	}
	var ok bool
	switch typ {
	case "COMPOSITE":
		ok = algo != "crc64nvme"
	case "FULL_OBJECT":
		ok = algo == "" || algo == "crc32" || algo == "crc32c" || algo == "crc64nvme"
	default:
		return errf(ErrInvalidRequest, "Value for x-amz-checksum-type header is invalid.")
	}
	if !ok {
		return errf(ErrInvalidRequest, "The %s checksum type cannot be used with the %s checksum algorithm.", typ, algo)
	}
	return nil
}

// checksumHeader is the header (and attribute) name of an algorithm.
func checksumHeader(algo string) string { return "x-amz-checksum-" + algo }

// payloadChecks are the digests a request body is checked against once read
// whole: Content-MD5, an x-amz-checksum-* header or trailer.
type payloadChecks struct {
	md5       hash.Hash // always computed: the ETag
	wantMD5   []byte    // Content-MD5, if sent
	algo      string    // the x-amz-checksum algorithm, "" none
	sum       hash.Hash
	want      string // its value (base64), from the header or the trailer
	inTrailer bool   // the value comes in the aws-chunked trailer
	// def, when set, is the default checksum (CRC-64/NVME) computed
	// beside the client's: a part of an upload created without an
	// algorithm, for the object's FULL_OBJECT checksum (mpchecksum.go).
	def hash.Hash
}

// newPayloadChecks reads the checksum headers of r.
func newPayloadChecks(r *http.Request) (*payloadChecks, error) {
	pc := &payloadChecks{md5: md5.New()}
	if vs := r.Header.Values("Content-MD5"); len(vs) > 0 {
		// Sent, even empty: it must be an MD5.
		b, err := base64.StdEncoding.DecodeString(vs[0])
		if err != nil || len(b) != md5.Size {
			return nil, withFields(ErrInvalidDigest, "Content-MD5", vs[0])
		}
		pc.wantMD5 = b
	}
	if t := r.Header.Get("X-Amz-Trailer"); t != "" {
		algo, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(t)), "x-amz-checksum-")
		if !ok || !validAlgorithm(algo) {
			return nil, errf(ErrInvalidRequest, "unsupported trailer %q", t)
		}
		pc.algo, pc.inTrailer = algo, true
	}
	if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
		// CompleteMultipartUpload: its x-amz-checksum-* headers are the
		// object's checksum (mpchecksum.go), not its body's.
		return pc, nil
	}
	sdk := strings.ToLower(r.Header.Get("X-Amz-Sdk-Checksum-Algorithm"))
	var sent []string // the algorithms of the x-amz-checksum-* headers sent, even empty
	for _, algo := range checksumAlgorithms {
		if _, ok := r.Header[http.CanonicalHeaderKey(checksumHeader(algo))]; ok {
			sent = append(sent, algo)
		}
	}
	if len(sent) > 1 || len(sent) == 1 && pc.inTrailer {
		return nil, errf(ErrInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	if len(sent) == 1 {
		algo, vs := sent[0], r.Header.Values(checksumHeader(sent[0]))
		if len(vs) != 1 || !validDigest(algo, vs[0]) {
			return nil, errf(ErrInvalidRequest, "Value for %s header is invalid.", checksumHeader(algo))
		}
		pc.algo, pc.want = algo, vs[0]
	}
	if sdk != "" && pc.algo != "" && sdk != pc.algo {
		return nil, errf(ErrInvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid.")
	}
	if sdk != "" && pc.algo == "" && validAlgorithm(sdk) {
		// The algorithm named without a value: compute it to store it.
		pc.algo = sdk
	}
	if pc.algo != "" {
		pc.sum = newChecksum(pc.algo)
	}
	return pc, nil
}

func (pc *payloadChecks) Write(p []byte) (int, error) {
	pc.md5.Write(p)
	if pc.sum != nil {
		pc.sum.Write(p)
	}
	if pc.def != nil {
		pc.def.Write(p)
	}
	return len(p), nil
}

// setTrailer records the value a trailer gave.
func (pc *payloadChecks) setTrailer(name, value string) error {
	if !pc.inTrailer || name != checksumHeader(pc.algo) {
		return ErrMalformedTrailer
	}
	if !validDigest(pc.algo, value) {
		return errf(ErrInvalidRequest, "Value for %s trailing header is invalid.", name)
	}
	pc.want = value
	return nil
}

// verify checks the digests once the body is read whole.
func (pc *payloadChecks) verify() error {
	if got := pc.md5.Sum(nil); pc.wantMD5 != nil && string(got) != string(pc.wantMD5) {
		// As AWS: what arrived in base64, what was sent in hex.
		return withFields(ErrBadDigest, "CalculatedDigest", base64.StdEncoding.EncodeToString(got),
			"ExpectedDigest", hex.EncodeToString(pc.wantMD5))
	}
	if pc.sum == nil {
		return nil
	}
	if pc.inTrailer && pc.want == "" {
		return ErrMalformedTrailer // the trailer named is missing
	}
	if pc.want != "" && pc.want != base64.StdEncoding.EncodeToString(pc.sum.Sum(nil)) {
		return errf(ErrBadDigest, "The %s you specified did not match the calculated checksum.", strings.ToUpper(pc.algo))
	}
	return nil
}

// checksum is the algorithm and its value (base64), "" when none.
func (pc *payloadChecks) checksum() (algo, value string) {
	if pc.sum == nil {
		return "", ""
	}
	return pc.algo, base64.StdEncoding.EncodeToString(pc.sum.Sum(nil))
}
