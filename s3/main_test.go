package s3_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
)

// One cluster and gateway for the package's tests (a real cluster: meta
// and three datanodes in process, the gateway over HTTP and HTTPS).
// clockAhead moves the shared gateway's clock ahead of real time, for the
// tests of expiries (see TestPresigned); they set it back when done.
var clockAhead atomic.Int64

var env struct {
	cluster *minicluster.Cluster
	client  *client.Client
	gw      *s3.Gateway
	http    *httptest.Server
	https   *httptest.Server
}

const (
	testKey    = "AKIDSTRATOTEST"
	testSecret = "c2VjcmV0LXNlY3JldC1zZWNyZXQ"
	region     = "us-east-1"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "strato-s3-test")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	// The cluster's own gateway, with the tests' key besides meta's, served
	// on the tests' HTTP and HTTPS listeners.
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: dir, BlockSize: 8 << 20, ContainerSize: 256 << 20,
		TickInterval: 200 * time.Millisecond,
		// Lifecycle rounds often, with days of lifecycleDay (lifecycle_test.go).
		ConfigureMeta: func(_ int, o *meta.Options) { o.LifecycleInterval, o.LifecycleDay = 100*time.Millisecond, lifecycleDay },
		S3: &minicluster.S3Options{Credentials: s3.StaticCredentials{testKey: testSecret},
			Gateway: s3.Options{Domain: "s3.test", Now: func() time.Time { return time.Now().Add(time.Duration(clockAhead.Load())) }}}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		panic(err)
	}
	cl, err := c.Client()
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	gw := c.S3Gateway()
	env.cluster, env.client, env.gw = c, cl, gw
	env.http = httptest.NewServer(gw)
	defer env.http.Close()
	env.https = httptest.NewTLSServer(gw)
	defer env.https.Close()
	code := m.Run()
	// Responses a test left unread would hold Close up.
	env.http.CloseClientConnections()
	env.https.CloseClientConnections()
	return code
}

// sdk is an SDK client of the gateway with its default settings (only the
// endpoint, path style and the keys set); tls picks the HTTPS server.
func sdk(t testing.TB, tlsOn bool, opts ...func(*awss3.Options)) *awss3.Client {
	srv := env.http
	if tlsOn {
		srv = env.https
	}
	return sdkAt(t, srv.URL, opts...)
}

// sdkAt is sdk's client of the gateway at endpoint.
func sdkAt(t testing.TB, endpoint string, opts ...func(*awss3.Options)) *awss3.Client {
	// LoadDefaultConfig, as a user's program does: it sets the SDK's
	// default checksum behaviour (CRC32 on every upload).
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(testKey, testSecret, "")),
		config.WithLogger(logging.Nop{}))
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]func(*awss3.Options){func(o *awss3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		o.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}}, opts...)
	return awss3.NewFromConfig(cfg, opts...)
}

var bucketSeq int

// newBucket creates a bucket with a unique name.
func newBucket(t testing.TB, c *awss3.Client) string {
	bucketSeq++
	name := fmt.Sprintf("b%d-%s", bucketSeq, sanitize(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	_, err := c.CreateBucket(context.Background(), &awss3.CreateBucketInput{Bucket: aws.String(name)})
	if err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

func sanitize(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			out = append(out, c)
		case 'A' <= c && c <= 'Z':
			out = append(out, c+'a'-'A')
		default:
			out = append(out, '-')
		}
	}
	for len(out) > 0 && out[len(out)-1] == '-' {
		out = out[:len(out)-1]
	}
	return string(out)
}

// newGatewayAt is a second gateway on the same cluster whose clock says at.
func newGatewayAt(t testing.TB, at time.Time) *s3.Gateway {
	gw, err := s3.New(context.Background(), s3.Options{Client: env.client, Credentials: s3.StaticCredentials{testKey: testSecret},
		CleanupInterval: -1, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return gw
}
