package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
	"github.com/strato-io/strato/telemetry"
)

func init() { extraCommands = append(extraCommands, newS3Cmd) }

func newS3Cmd() *cobra.Command {
	var (
		followerReads     bool
		o                 s3.Options
		metas, listen     string
		httpAddr          string
		certFile, keyFile string
		credFile          string
		clusterCA         string
		token, tokenFile  string
		pprof             bool
		keyTTL            time.Duration
		accessLog         string
		rc                roleConfig
	)
	cmd := &cobra.Command{
		Use:   "s3 --meta ADDR [--listen 127.0.0.1:9878]",
		Short: "Run an S3 gateway: the S3 REST API on the buckets of one volume",
		Long: `s3 serves the S3 REST API (docs/s3.md) on --listen: S3 buckets are the
buckets of --volume (default s3v). It keeps no state of its own, so any
number of gateways may serve one cluster.

Every request must be signed (AWS Signature Version 4, or 2) with an access key
kept in meta (strato admin s3 key create; a revoked key is refused within
--key-cache-ttl), or one given to this gateway alone by --credentials FILE
(one "ACCESS_KEY SECRET" pair a line) or the environment variables
STRATO_S3_ACCESS_KEY and STRATO_S3_SECRET_KEY. HTTPS with --tls-cert and
--tls-key. Every request is logged, one JSON line, to --access-log (default
standard output). With a meta that authenticates clients (--auth token), the
gateway presents the token of --token-file (default $STRATO_TOKEN) on its
calls to meta: an
administrator's, or a user's whose keys are the only ones it then accepts.
SIGTERM stops it.

strato s3 cp, ls, rm, mb, rb and presign are an S3 client of any
endpoint, on the AWS SDK for Go (multipart uploads, ranged parallel
downloads, retries).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := rc.log.logger(os.Stderr)
			if token != "" && rc.from("token") == "flag" {
				log.Warn(argvSecretWarning("token", "token-file", client.TokenEnv))
			}
			token, err := secretOf(token, "token", tokenFile, "token-file", client.TokenEnv)
			if err != nil {
				return err
			}
			creds, err := loadS3Credentials(credFile)
			if err != nil {
				return err
			}
			tlsConfig, err := clusterTLS(cmd, clusterCA)
			if err != nil {
				return err
			}
			access, closeAccess, err := openAccessLog(accessLog, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer closeAccess()
			tp, err := rc.startTracing(cmd.Context(), listen, log)
			if err != nil {
				return err
			}
			o.AccessLog, o.TracerProvider = access, tp
			c, err := client.New(client.Options{Meta: strings.Split(metas, ","), TLS: tlsConfig, Token: token, Logger: log.With("component", "client"), Owner: "s3",
				TracerProvider: tp, FollowerReads: followerReads})
			if err != nil {
				return err
			}
			defer func() { _ = c.Close() }()
			mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: c, TTL: keyTTL})
			if err != nil {
				return err
			}
			reg := telemetry.NewRegistry()
			if err := registerCertFile(reg, certFile, keyFile); err != nil {
				return err
			}
			o.Client, o.Credentials, o.Logger, o.Observe = c, s3.ChainCredentials{creds, mc}, log, telemetry.NewS3Metrics(reg).Observe
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			gw, err := s3.New(ctx, o)
			cancel()
			if err != nil {
				return err
			}
			defer func() { _ = gw.Close() }()
			telemetry.RegisterS3Cache(reg, gw.AccessCacheBytes)
			stopMetrics, err := serveMetrics(httpAddr, reg, pprof, log)
			if err != nil {
				return err
			}
			defer stopMetrics()
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: gw, ReadHeaderTimeout: time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
			done := make(chan error, 1)
			scheme := "http"
			if certFile != "" || keyFile != "" {
				scheme = "https"
				go func() { done <- srv.ServeTLS(lis, certFile, keyFile) }()
			} else {
				go func() { done <- srv.Serve(lis) }()
			}
			log.Info("s3 gateway serving", "endpoint", scheme+"://"+lis.Addr().String(), "volume", o.Volume, "meta", metas, "local keys", len(creds))
			select {
			case err := <-done:
				return err
			case <-cmd.Context().Done():
			}
			log.Info("s3 gateway shutting down")
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	cmd.AddCommand(s3ClientCommands()...)
	f := cmd.Flags()
	f.StringVar(&metas, "meta", "127.0.0.1:9860", "meta replicas' gRPC addresses, comma-separated")
	f.BoolVar(&followerReads, "meta-follower-reads", false, "spread meta reads (GET, HEAD and LIST metadata) over every --meta replica, each served linearizably (a follower asks the leader for a ReadIndex first; meta's --follower-reads); writes go to the leader")
	f.StringVar(&listen, "listen", "127.0.0.1:9878", "address of the S3 endpoint")
	f.StringVar(&o.Volume, "volume", "s3v", "the volume whose buckets are the S3 buckets")
	f.StringVar(&o.Domain, "domain", "", "serve virtual-host-style requests to BUCKET.DOMAIN too (default: path style only)")
	f.StringVar(&o.Region, "region", "us-east-1", "the region the gateway answers for")
	f.StringVar(&certFile, "tls-cert", "", "certificate file (PEM) to serve HTTPS")
	f.StringVar(&keyFile, "tls-key", "", "its private key (PEM)")
	f.StringVar(&clusterCA, "tls-ca", "", "the cluster CA's certificate (ca.crt): talk TLS to meta and the datanodes; $"+tlsCAEnv+" replaces the default (none: plaintext)")
	f.StringVar(&tokenFile, "token-file", "", "a file holding the token the gateway presents to meta (meta's --auth token); default $"+client.TokenEnv)
	f.StringVar(&token, "token", "", "that token on the command line, where every user of the host can read it: prefer --token-file or $"+client.TokenEnv)
	f.StringVar(&credFile, "credentials", "", `file of "ACCESS_KEY SECRET" lines, accepted besides the keys in meta`)
	f.DurationVar(&keyTTL, "key-cache-ttl", 5*time.Second, "how long a key found in meta is used before meta is asked again (the longest a revoked key keeps working)")
	f.StringVar(&httpAddr, "http", "", "address of the HTTP endpoint serving /metrics (Prometheus), /healthz and /readyz, e.g. 127.0.0.1:9879 (default: none)")
	addPprofFlag(f, &pprof)
	f.StringVar(&accessLog, "access-log", "-", `where the access log goes, one JSON line a request (docs/s3.md, Access log): a file (appended to), "-" for standard output, or "off"`)
	f.DurationVar(&o.MultipartExpiry, "multipart-expiry", 0, "abort multipart uploads older than this (default 7 days)")
	markSecret(f, "token")
	rc.attach(cmd, "s3", slog.LevelInfo)
	return cmd
}

// openAccessLog opens the access log --access-log names: a file, appended
// to (made 0640), stdout for "-", none for "off".
func openAccessLog(spec string, stdout io.Writer) (io.Writer, func(), error) {
	switch spec {
	case "off":
		return nil, func() {}, nil
	case "-":
		return stdout, func() {}, nil
	}
	f, err := os.OpenFile(spec, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("--access-log: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

// loadS3Credentials reads the access keys given to this gateway alone
// (the keys in meta need nothing).
func loadS3Credentials(file string) (s3.StaticCredentials, error) {
	creds := s3.StaticCredentials{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			fs := strings.Fields(line)
			if len(fs) != 2 {
				return nil, fmt.Errorf("%s:%d: want \"ACCESS_KEY SECRET\"", file, n)
			}
			creds[fs[0]] = fs[1]
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if k, s := os.Getenv("STRATO_S3_ACCESS_KEY"), os.Getenv("STRATO_S3_SECRET_KEY"); k != "" && s != "" {
		creds[k] = s
	}
	return creds, nil
}

// The development access key of strato dev's gateway.
const (
	devS3AccessKey = "strato-dev"
	devS3SecretKey = "strato-dev-secret"
)

// startDevS3 starts strato dev's S3 gateway (minicluster's), with the
// development key made in meta (kept if it exists: a revoked one comes
// back at the next start), and prints how to reach it; a gateway that
// cannot start (its port taken) is reported, not fatal. With TLS it serves
// HTTPS with a certificate "s3" of the cluster's CA.
//
// With token (an administrator's) it presents it to meta, and the key is
// the administrator's. access, when set, gets the gateway's access log.
func startDevS3(ctx context.Context, out io.Writer, c *minicluster.Cluster, addr, token string, access io.Writer) {
	fail := func(err error) { fmt.Fprintf(out, "  s3        not started: %v\n", err) }
	cl, err := c.ClientWithToken(token)
	if err != nil {
		fail(err)
		return
	}
	defer func() { _ = cl.Close() }()
	kctx, cancel := context.WithTimeout(ctx, time.Minute)
	user := "dev"
	if token != "" {
		user = "" // the caller's: the administrator
	}
	_, _, err = cl.CreateS3Key(kctx, user, devS3AccessKey, devS3SecretKey)
	cancel()
	if err != nil && !errors.Is(err, client.ErrExists) {
		fail(fmt.Errorf("creating the development access key: %w", err))
		return
	}
	ep, err := c.StartS3(ctx, minicluster.S3Options{Listen: addr, Token: token, Gateway: s3.Options{AccessLog: access}})
	if err != nil {
		fail(err)
		return
	}
	bundle := ""
	if ca := c.CAFile(); ca != "" {
		abs, _ := filepath.Abs(ca)
		bundle = " --ca-bundle " + abs
	}
	fmt.Fprintf(out, "  s3        %s   (access key %s, secret %s)\n", ep, devS3AccessKey, devS3SecretKey)
	fmt.Fprintf(out, "            AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s aws --endpoint-url %s%s s3 mb s3://bucket1\n",
		devS3AccessKey, devS3SecretKey, ep, bundle)
}
