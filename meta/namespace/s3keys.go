package namespace

import (
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The access keys of the S3 gateways (Ozone keeps them in its OM's
// S3SecretTable): one record per access key, "Ns<access key>" →
// S3KeyRecord. Prepare fixes the access key and the secret (generated from
// PrepareEnv.Rand unless the request gives them), so that every replica
// stores the same; apply only checks and writes.

// Generated access keys are 20 characters of base32 (12 random bytes,
// AWS's length), secrets 40 characters of URL-safe base64 (30 bytes).
const (
	accessKeyRandomBytes = 12
	secretRandomBytes    = 30
)

func s3KeyKey(buf []byte, accessKey string) []byte {
	return append(tableKey(buf, tagS3Key), accessKey...)
}

// ValidateAccessKey checks an access key given by an operator: 3 to 128
// characters of [A-Za-z0-9._-] (no '/', which would make a SigV4
// credential ambiguous).
func ValidateAccessKey(k string) error {
	if len(k) < 3 || len(k) > 128 {
		return invalidName("access key", k, "must be 3 to 128 characters")
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return invalidName("access key", k, "may hold only letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

// validateSecret checks a secret given by an operator: 8 to 128 printable
// ASCII characters, no spaces. The message never quotes it.
func validateSecret(s string) error {
	if len(s) < 8 || len(s) > 128 {
		return fmt.Errorf("%w: a secret must be 8 to 128 characters", ErrInvalid)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return fmt.Errorf("%w: a secret may hold only printable ASCII characters, no spaces", ErrInvalid)
		}
	}
	return nil
}

// prepareS3Key makes the record of a new access key: checked, with what
// was not given generated from rnd.
func (ns *Namespace) prepareS3Key(r *stratov1.CreateS3KeyRequest, env PrepareEnv) (*stratov1.S3KeyRecord, error) {
	rec := &stratov1.S3KeyRecord{AccessKey: r.GetAccessKey(), Secret: r.GetSecret(), User: r.GetUser(), CreatedUnixMs: env.Now.UnixMilli()}
	if len(rec.User) > 256 {
		return nil, invalidName("user", rec.User[:32]+"...", "must be at most 256 bytes")
	}
	if rec.AccessKey != "" {
		if err := ValidateAccessKey(rec.AccessKey); err != nil {
			return nil, err
		}
	}
	if rec.Secret != "" {
		if err := validateSecret(rec.Secret); err != nil {
			return nil, err
		}
	}
	if (rec.AccessKey == "" || rec.Secret == "") && env.Rand == nil {
		return nil, fmt.Errorf("namespace: no random source to generate an access key")
	}
	if rec.AccessKey == "" {
		b := make([]byte, accessKeyRandomBytes)
		if _, err := io.ReadFull(env.Rand, b); err != nil {
			return nil, err
		}
		rec.AccessKey = base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	}
	if rec.Secret == "" {
		b := make([]byte, secretRandomBytes)
		if _, err := io.ReadFull(env.Rand, b); err != nil {
			return nil, err
		}
		rec.Secret = base64.RawURLEncoding.EncodeToString(b)
	}
	return rec, nil
}

func (a *applier) createS3Key(c *stratov1.S3KeyRecord) (proto.Message, error) {
	if err := ValidateAccessKey(c.GetAccessKey()); err != nil {
		return nil, err
	}
	if err := validateSecret(c.GetSecret()); err != nil {
		return nil, err
	}
	key := s3KeyKey(nil, c.GetAccessKey())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrS3KeyExists, c.GetAccessKey())
	}
	rec := &stratov1.S3KeyRecord{AccessKey: c.GetAccessKey(), Secret: c.GetSecret(), User: c.GetUser(), CreatedUnixMs: c.GetCreatedUnixMs()}
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.CreateS3KeyResponse{Key: s3Key(rec), Secret: rec.Secret}, nil
}

func (a *applier) revokeS3Key(c *stratov1.RevokeS3KeyCommand) (proto.Message, error) {
	key := s3KeyKey(nil, c.GetAccessKey())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrS3KeyNotFound, c.GetAccessKey())
	}
	return &stratov1.RevokeS3KeyResponse{}, a.b.Delete(key, nil)
}

// s3Key is the API's view of an access key: never its secret.
func s3Key(r *stratov1.S3KeyRecord) *stratov1.S3Key {
	return &stratov1.S3Key{AccessKey: r.GetAccessKey(), User: r.GetUser(), CreatedUnixMs: r.GetCreatedUnixMs()}
}

// S3Secret returns an access key with its secret.
func (rd *Reader) S3Secret(accessKey string) (*stratov1.GetS3SecretResponse, error) {
	rec := &stratov1.S3KeyRecord{}
	if accessKey == "" {
		return nil, fmt.Errorf("%w: an empty access key", ErrS3KeyNotFound)
	}
	if ok, err := get(rd.r, s3KeyKey(nil, accessKey), rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrS3KeyNotFound, accessKey)
	}
	return &stratov1.GetS3SecretResponse{Key: s3Key(rec), Secret: rec.Secret}, nil
}

// ListS3Keys lists access keys (without their secrets) in order, those of
// one user when req names one.
func (rd *Reader) ListS3Keys(req *stratov1.ListS3KeysRequest) (*stratov1.ListS3KeysResponse, error) {
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListS3KeysResponse{}
	err := scan(rd.r, tableKey(nil, tagS3Key), "", req.GetStartAfter(), func(_, v []byte) (bool, error) {
		rec := &stratov1.S3KeyRecord{}
		if err := proto.Unmarshal(v, rec); err != nil {
			return false, fmt.Errorf("%w: access key: %w", ErrCorrupt, err)
		}
		if req.GetUser() != "" && rec.User != req.GetUser() {
			return true, nil
		}
		if len(res.Keys) == limit {
			res.Truncated = true
			return false, nil
		}
		res.Keys = append(res.Keys, s3Key(rec))
		return true, nil
	})
	return res, err
}
