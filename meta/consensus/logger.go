package consensus

import (
	"context"
	"fmt"
	"log/slog"
)

// raftLogger adapts a *slog.Logger to raft.Logger and pebble.Logger.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) log(level slog.Level, v ...any) {
	if r.l.Enabled(context.Background(), level) {
		r.l.Log(context.Background(), level, fmt.Sprint(v...))
	}
}

func (r raftLogger) logf(level slog.Level, format string, v ...any) {
	if r.l.Enabled(context.Background(), level) {
		r.l.Log(context.Background(), level, fmt.Sprintf(format, v...))
	}
}

func (r raftLogger) Debug(v ...any)                 { r.log(slog.LevelDebug, v...) }
func (r raftLogger) Debugf(format string, v ...any) { r.logf(slog.LevelDebug, format, v...) }
func (r raftLogger) Info(v ...any)                  { r.log(slog.LevelInfo, v...) }
func (r raftLogger) Infof(format string, v ...any)  { r.logf(slog.LevelInfo, format, v...) }
func (r raftLogger) Warning(v ...any)               { r.log(slog.LevelWarn, v...) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.logf(slog.LevelWarn, format, v...)
}
func (r raftLogger) Error(v ...any)                 { r.log(slog.LevelError, v...) }
func (r raftLogger) Errorf(format string, v ...any) { r.logf(slog.LevelError, format, v...) }

// Fatal and Panic are raft's (and Pebble's) reports of broken invariants;
// they panic rather than exit, so the process owner decides.
func (r raftLogger) Fatal(v ...any) { r.log(slog.LevelError, v...); panic(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(format string, v ...any) {
	r.logf(slog.LevelError, format, v...)
	panic(fmt.Sprintf(format, v...))
}
func (r raftLogger) Panic(v ...any) { r.log(slog.LevelError, v...); panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(format string, v ...any) {
	r.logf(slog.LevelError, format, v...)
	panic(fmt.Sprintf(format, v...))
}

// pebbleLogger adapts a *slog.Logger to pebble.Logger. Pebble calls Fatalf
// when the DB can no longer be trusted (e.g. a failed WAL sync); it panics
// with a storageFailure, which the raft goroutine turns into the node's
// failure: its waiting proposals fail instead of the process dying.
type pebbleLogger struct{ raftLogger }

type storageFailure struct{ msg string }

func (f storageFailure) Error() string { return ErrStorage.Error() + ": " + f.msg }
func (f storageFailure) Unwrap() error { return ErrStorage }

// guard runs fn, turning a storage failure reported by Pebble into an error.
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(storageFailure)
			if !ok {
				panic(r)
			}
			err = f
		}
	}()
	return fn()
}

func (p pebbleLogger) Fatalf(format string, v ...any) {
	p.logf(slog.LevelError, format, v...)
	panic(storageFailure{fmt.Sprintf(format, v...)})
}
