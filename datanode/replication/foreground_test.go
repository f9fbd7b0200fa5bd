package replication_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/datanode/replication"
)

// TestForegroundGiveWay: GiveWay returns at once on an idle datanode,
// waits out the quiet time after a client request, and never longer than
// the longest wait however busy the clients keep it.
func TestForegroundGiveWay(t *testing.T) {
	clock := clockwork.NewFakeClock()
	f := replication.NewForeground(250*time.Millisecond, 5*time.Second, clock)
	ctx := context.Background()
	require.NoError(t, f.GiveWay(ctx), "never touched: idle")

	giveWay := func() chan error {
		done := make(chan error, 1)
		go func() { done <- f.GiveWay(ctx) }()
		return done
	}
	// settle waits until GiveWay has returned (true) or waits on a timer.
	settle := func(done chan error) bool {
		for {
			select {
			case err := <-done:
				require.NoError(t, err)
				return true
			default:
			}
			c, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			err := clock.BlockUntilContext(c, 1)
			cancel()
			if err == nil {
				return false
			}
		}
	}
	// A client now: the copy waits a quarter second.
	f.Touch()
	done := giveWay()
	require.False(t, settle(done))
	clock.Advance(200 * time.Millisecond)
	require.False(t, settle(done), "still waiting at 200 ms")
	clock.Advance(50 * time.Millisecond)
	require.True(t, settle(done))
	require.Equal(t, 250*time.Millisecond, f.Waited())

	// Clients all the time: the copy goes after 5 s anyway.
	f.Touch()
	done = giveWay()
	require.False(t, settle(done))
	for i := range 30 {
		clock.Advance(200 * time.Millisecond)
		f.Touch()
		if settle(done) {
			require.Equal(t, 24, i, "returned after 5 s")
			require.Equal(t, 5250*time.Millisecond, f.Waited())
			return
		}
	}
	t.Fatal("GiveWay waited past its longest wait")
}

func TestForegroundCanceled(t *testing.T) {
	f := replication.NewForeground(time.Hour, time.Hour, nil)
	f.Touch()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, f.GiveWay(ctx), context.DeadlineExceeded)
	var nilF *replication.Foreground
	nilF.Touch()
	require.NoError(t, nilF.GiveWay(ctx), "a nil Foreground never waits")
}

// busy keeps f's datanode serving clients until the returned stop.
func busy(f *replication.Foreground) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			f.Touch()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// TestPushGivesWay: a background push (a balancer's move) waits for the
// clients of its source and, through IMPORT_BEGIN's flag, of its target,
// a piece at a time, and still arrives whole; a push that is not
// background never waits for them.
func TestPushGivesWay(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	data := map[uint64]map[uint64][]byte{}
	for _, id := range []uint64{31, 32, 33} {
		data[id] = closedContainer(t, src, id, []int{3 << 20}, 1<<20)
	}
	push := func(id uint64, fg *replication.Foreground) time.Duration {
		start := time.Now()
		_, err := replication.Push(context.Background(), src.store, id, dst.addr, replication.Options{
			Foreground: fg, FrameSize: 1 << 20, Logger: quiet()})
		require.NoError(t, err)
		checkCopy(t, dst, id, data[id])
		return time.Since(start)
	}

	// The source busy: each of the three frames waits the longest
	// wait, 300 ms.
	stop := busy(src.fg)
	el := push(31, src.fg)
	stop()
	t.Logf("source busy: %v, waited %v", el, src.fg.Waited())
	require.GreaterOrEqual(t, src.fg.Waited(), 750*time.Millisecond)
	require.GreaterOrEqual(t, el, 750*time.Millisecond)

	// The target busy: it reads the frames slowly; the source, idle, does
	// not wait.
	require.NoError(t, src.fg.GiveWay(context.Background())) // the source's clients are gone: idle from here
	srcWaited := src.fg.Waited()
	stop = busy(dst.fg)
	el = push(32, src.fg)
	t.Logf("target busy: %v, waited %v", el, dst.fg.Waited())
	require.GreaterOrEqual(t, dst.fg.Waited(), 750*time.Millisecond)
	require.Less(t, src.fg.Waited()-srcWaited, 100*time.Millisecond)

	// Not background: the busy target reads at once.
	dstWaited := dst.fg.Waited()
	push(33, nil)
	stop()
	require.Less(t, dst.fg.Waited()-dstWaited, 100*time.Millisecond)
}
