package s3

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
)

// A multipart upload's checksum, as S3 defines it since 2025: the upload
// names an algorithm and a type when it is created (x-amz-checksum-
// algorithm, x-amz-checksum-type). COMPOSITE: the object's checksum is the
// checksum of its parts' checksums, "-N" after it; every part carries one
// and the Complete lists them. FULL_OBJECT (the CRCs only): the checksum
// of the whole object, combined from the parts' CRCs and their lengths. An
// upload created without an algorithm gets CRC64NVME, FULL_OBJECT, from
// checksums the gateway computes of every part.

const (
	attrUploadType = "x-strato-upload-checksum-type"
	// attrPartDefault is the default checksum of a part that came with
	// another one, on an upload created without an algorithm.
	attrPartDefault = "x-strato-part-crc64nvme"
	typeComposite   = "COMPOSITE"
	typeFullObject  = "FULL_OBJECT"
	// defaultAlgorithm is the checksum an object gets when its client
	// sends none (S3's default since 2025).
	defaultAlgorithm = "crc64nvme"
)

var errUnsupportedAlgorithm = errf(ErrInvalidRequest, "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")

// uploadChecksum is what an upload's marker says of its checksum; algo ""
// is an upload created without one.
type uploadChecksum struct{ algo, typ string }

func uploadChecksumOf(m attrs) uploadChecksum {
	return uploadChecksum{algo: m[attrUploadAlgo], typ: m[attrUploadType]}
}

// createChecksum reads CreateMultipartUpload's checksum headers into the
// marker's attributes m and returns the upload's checksum.
func createChecksum(algoHeader, typeHeader string, m attrs) (uploadChecksum, error) {
	algo, typ := strings.ToLower(algoHeader), strings.ToUpper(typeHeader)
	if typ != "" && typ != typeComposite && typ != typeFullObject {
		return uploadChecksum{}, errf(ErrInvalidRequest, "Value for x-amz-checksum-type header is invalid.")
	}
	if algo == "" {
		if typ != "" {
			return uploadChecksum{}, errf(ErrInvalidRequest, "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
		}
		return uploadChecksum{}, nil
	}
	if !validAlgorithm(algo) {
		return uploadChecksum{}, errUnsupportedAlgorithm
	}
	if err := checksumSchema(typ, algo); err != nil {
		return uploadChecksum{}, err
	}
	if typ == "" {
		typ = typeComposite
		if algo == "crc64nvme" {
			typ = typeFullObject
		}
	}
	m[attrUploadAlgo], m[attrUploadType] = algo, typ
	return uploadChecksum{algo: algo, typ: typ}, nil
}

// partChecks sets what a part's body is checked and summed with: the
// upload's algorithm (a part of a COMPOSITE upload must bring its value),
// or, for an upload without one, the part's own or the default.
func (u uploadChecksum) partChecks(pc *payloadChecks) error {
	switch {
	case u.algo == "":
		switch pc.algo {
		case "":
			pc.algo, pc.sum = defaultAlgorithm, newChecksum(defaultAlgorithm)
		case defaultAlgorithm:
		default:
			pc.def = newChecksum(defaultAlgorithm)
		}
	case pc.algo != "" && pc.algo != u.algo:
		return errf(ErrInvalidRequest, "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: %s",
			upperAlgo(u.algo), upperAlgo(pc.algo))
	case pc.algo == "" && u.typ == typeComposite:
		return errf(ErrInvalidRequest, "Checksum Type mismatch occurred, expected checksum Type: %s, actual checksum Type: null", upperAlgo(u.algo))
	case pc.algo == "":
		pc.algo, pc.sum = u.algo, newChecksum(u.algo)
	}
	return nil
}

// checkPartChecksum checks the checksum a Complete gives for part n
// against the part's attributes pa.
func (u uploadChecksum) checkPartChecksum(n int, p completePart, pa attrs) error {
	given := p.given()
	if len(given) > 1 || len(given) == 1 && !validDigest(given[0][0], given[0][1]) {
		value := ""
		for _, g := range given {
			value += upperAlgo(g[0]) + ":" + g[1] + ";"
		}
		if len(given) == 1 {
			value = given[0][1]
		}
		return withFields(errf(ErrInvalidArgument, "Invalid Base64 or multiple checksums present in request"),
			"ArgumentName", "Checksum", "ArgumentValue", value)
	}
	if u.algo == "" {
		return nil
	}
	if len(given) == 0 {
		if u.typ == typeComposite {
			return errf(ErrInvalidRequest, "The upload was created using a %s checksum. The complete request must include the checksum for each part. It was missing for part %d in the request.", u.algo, n)
		}
		return nil
	}
	if given[0][0] != u.algo {
		return errf(ErrBadDigest, "The %s you specified for part %d did not match what we received.", given[0][0], n)
	}
	if given[0][1] != pa[checksumHeader(u.algo)] {
		return errInvalidPartComplete
	}
	return nil
}

// given lists the checksums a Complete names for a part, as (algo, value).
func (p completePart) given() [][2]string {
	var out [][2]string
	for _, a := range checksumAlgorithms {
		if v := *p.field(a); v != "" {
			out = append(out, [2]string{a, v})
		}
	}
	return out
}

// validDigest reports whether v is a base64 digest of algo's size.
func validDigest(algo, v string) bool {
	d, err := base64.StdEncoding.DecodeString(v)
	return err == nil && len(d) == newChecksum(algo).Size()
}

// finalChecksum is the object's checksum made of its parts (their
// attributes and sizes, in order): the algorithm and the value as stored
// ("" when the parts lack what it needs).
func (u uploadChecksum) finalChecksum(parts []attrs, sizes []int64) (algo, value string) {
	algo, typ := u.algo, u.typ
	if algo == "" {
		algo, typ = defaultAlgorithm, typeFullObject
	}
	digests := make([][]byte, len(parts))
	for i, pa := range parts {
		v := pa[checksumHeader(algo)]
		if u.algo == "" && pa[attrPartDefault] != "" {
			v = pa[attrPartDefault]
		}
		d, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(d) == 0 {
			return "", ""
		}
		digests[i] = d
	}
	if typ == typeComposite {
		h := newChecksum(algo)
		for _, d := range digests {
			h.Write(d)
		}
		return algo, base64.StdEncoding.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
	}
	sum, ok := combineCRCs(algo, digests, sizes)
	if !ok {
		return "", ""
	}
	return algo, base64.StdEncoding.EncodeToString(sum)
}

// checkFinal checks the whole object's checksum a Complete gives in the
// header x-amz-checksum-ALGO (got: what the gateway computed, as stored).
// An upload without an algorithm ignores it, as S3 does.
func (u uploadChecksum) checkFinal(header func(string) string, algo, got string) error {
	for _, a := range checksumAlgorithms {
		if v := header(checksumHeader(a)); v != "" && !validFinal(a, v) {
			return errf(ErrInvalidRequest, "Value for %s header is invalid.", checksumHeader(a))
		}
	}
	if u.algo == "" {
		return nil
	}
	v := header(checksumHeader(u.algo))
	if v == "" {
		return nil
	}
	want, _, _ := strings.Cut(got, "-")
	if v, _, _ = strings.Cut(v, "-"); v != want || algo == "" {
		return errf(ErrBadDigest, "The %s you specified did not match the calculated checksum.", strings.ToUpper(u.algo))
	}
	return nil
}

// validFinal reports whether v is an object checksum of algo: a digest,
// and for a COMPOSITE one "-" and the count of parts after it.
func validFinal(algo, v string) bool {
	d, n, composite := strings.Cut(v, "-")
	if composite {
		if c, err := strconv.Atoi(n); err != nil || c < 1 || strconv.Itoa(c) != n {
			return false
		}
	}
	return validDigest(algo, d)
}

// checkCompleteHeaders checks a Complete's checksum headers: one object
// checksum at most, and its x-amz-checksum-type against the upload's.
func (u uploadChecksum) checkCompleteHeaders(h http.Header) error {
	n := 0
	for _, a := range checksumAlgorithms {
		if h.Get(checksumHeader(a)) != "" {
			n++
		}
	}
	if n > 1 {
		return errf(ErrInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	t := h.Get("X-Amz-Checksum-Type")
	if t == "" {
		return nil
	}
	t = strings.ToUpper(t)
	if t != typeComposite && t != typeFullObject {
		return errf(ErrInvalidRequest, "Value for x-amz-checksum-type header is invalid.")
	}
	if u.typ != "" && t != u.typ {
		return errf(ErrInvalidRequest, "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", u.typ)
	}
	return nil
}

// combineCRCs is the CRC of the concatenation of pieces whose CRCs (big
// endian, as S3 gives them) and lengths are crcs and sizes.
func combineCRCs(algo string, crcs [][]byte, sizes []int64) ([]byte, bool) {
	poly, width := uint64(0), 0
	switch algo {
	case "crc32":
		poly, width = 0xedb88320, 32
	case "crc32c":
		poly, width = 0x82f63b78, 32
	case "crc64nvme":
		poly, width = 0x9a6c9329ac4bc9b5, 64
	default:
		return nil, false
	}
	var sum uint64
	for i, c := range crcs {
		if len(c) != width/8 {
			return nil, false
		}
		v := uint64(binary.BigEndian.Uint32(c[len(c)-4:]))
		if width == 64 {
			v = binary.BigEndian.Uint64(c)
		}
		if i == 0 {
			sum = v
			continue
		}
		sum = crcCombine(poly, width, sum, v, sizes[i])
	}
	out := binary.BigEndian.AppendUint64(nil, sum)
	return out[8-width/8:], true
}

// crcCombine is zlib's crc32_combine for any reflected CRC whose initial
// value and final XOR are all ones (CRC-32, CRC-32C, CRC-64/NVME): the CRC
// of A then B from crc(A), crc(B) and len(B), as crc(A) times x^(8 len(B))
// modulo the polynomial, plus crc(B).
func crcCombine(poly uint64, width int, crcA, crcB uint64, lenB int64) uint64 {
	if lenB <= 0 {
		return crcA
	}
	top := uint64(1) << (width - 1) // x^0 in the reflected order
	mult := func(a, b uint64) uint64 {
		var p uint64
		for m := top; m != 0; m >>= 1 {
			if a&m != 0 {
				p ^= b
			}
			if b&1 != 0 {
				b = b>>1 ^ poly
			} else {
				b >>= 1
			}
		}
		return p
	}
	// x^(8 lenB): repeated squaring of x^8.
	xn, sq := top, mult(top>>1, top>>1) // x^0, then x^2
	sq = mult(sq, sq)                   // x^4
	sq = mult(sq, sq)                   // x^8
	for n := uint64(lenB); n != 0; n >>= 1 {
		if n&1 != 0 {
			xn = mult(xn, sq)
		}
		sq = mult(sq, sq)
	}
	return mult(xn, crcA) ^ crcB
}

// checksumType is the type of an object's stored checksum value.
func checksumTypeOf(v string) string {
	if strings.Contains(v, "-") {
		return typeComposite
	}
	return typeFullObject
}
