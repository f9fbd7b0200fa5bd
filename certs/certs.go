package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Names of the CA's files in its directory.
const (
	CACert = "ca.crt"
	CAKey  = "ca.key"
)

// Lifetimes of the certificates made here.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	CertValidity = 365 * 24 * time.Hour
)

// ErrExists is returned by InitCA when the directory already holds a CA.
var ErrExists = errors.New("certs: CA already exists")

// InitCA creates a CA in dir (created with mode 0700 if missing): ca.crt
// and ca.key. It refuses to overwrite either file.
func InitCA(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	for _, f := range []string{CACert, CAKey} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return fmt.Errorf("%w: %s", ErrExists, filepath.Join(dir, f))
		}
	}
	key, tmpl, err := newCertificate("strato cluster CA", CAValidity)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	tmpl.IsCA = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return writePair(filepath.Join(dir, CACert), filepath.Join(dir, CAKey), der, key)
}

// Issue writes outDir/NAME.crt and outDir/NAME.key: a certificate signed
// by the CA in caDir, for server and client auth, valid for a year, whose
// subject alternative names are hosts (IP addresses and DNS names) plus
// 127.0.0.1 and localhost. It overwrites an earlier NAME.crt/NAME.key.
func Issue(caDir, outDir, name string, hosts []string) error {
	if name == "" || name != filepath.Base(name) || name == "ca" {
		return fmt.Errorf("certs: invalid certificate name %q", name)
	}
	caCert, caKey, err := loadCA(caDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	key, tmpl, err := newCertificate(name, CertValidity)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	for _, h := range append(slices.Clone(hosts), "127.0.0.1", "localhost") {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if h != "" && !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	crt, kf := filepath.Join(outDir, name+".crt"), filepath.Join(outDir, name+".key")
	for _, f := range []string{crt, kf} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("certs: %w", err)
		}
	}
	return writePair(crt, kf, der, key)
}

// newCertificate makes a P-256 key and the template of a certificate for
// it named name (organization "strato"), valid from an hour ago for
// validity, with a random serial number.
func newCertificate(name string, validity time.Duration) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	return key, &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{Organization: []string{"strato"}, CommonName: name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
	}, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	return n, nil
}

// writePair writes a certificate and its key, refusing to replace either.
func writePair(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeNew(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return writeNew(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: %s", ErrExists, path)
		}
		return fmt.Errorf("certs: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return nil
}

func loadCA(dir string) (*x509.Certificate, any, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CACert), filepath.Join(dir, CAKey))
	if err != nil {
		return nil, nil, fmt.Errorf("certs: load CA from %s: %w", dir, err)
	}
	return pair.Leaf, pair.PrivateKey, nil
}

// LoadPool reads a PEM file of CA certificates into a pool.
func LoadPool(caFile string) (*x509.CertPool, error) {
	data, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("certs: no certificate in %s", caFile)
	}
	return pool, nil
}

// ServerConfig is the TLS configuration of a server presenting the
// certificate in certFile/keyFile: TLS 1.3, and client certificates, when
// given, verified against the CA in caFile (a connection with one from
// another CA fails its handshake; one without is let through, and the
// server decides what it may do: see Verified).
func ServerConfig(certFile, keyFile, caFile string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	pool, err := LoadPool(caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
	}, nil
}

// ClientConfig is the TLS configuration of a client that trusts the CA in
// caFile; with certFile and keyFile (both or neither) it presents that
// certificate to servers that ask for one.
func ClientConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	pool, err := LoadPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("certs: a client certificate needs both its certificate and key files")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("certs: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// Verified reports whether a connection's peer presented a client
// certificate that pool's CAs signed. It verifies the chain itself, so it
// also serves servers that only request certificates
// (tls.RequestClientCert) to refuse at the application level, with a
// clear error, what their handshake let through.
func Verified(pool *x509.CertPool, state tls.ConnectionState) error {
	if len(state.PeerCertificates) == 0 {
		return errors.New("certs: no client certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range state.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := state.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         pool,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return fmt.Errorf("certs: client certificate %q: %w", state.PeerCertificates[0].Subject.CommonName, err)
	}
	return nil
}
