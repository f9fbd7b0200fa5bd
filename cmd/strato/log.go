package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// logFlags are --log-level and --log-format, which every server role
// builds its logger from (logger).
type logFlags struct {
	level  logLevel
	format logFormat
}

// add adds the flags to f, the level's default def.
func (l *logFlags) add(f *pflag.FlagSet, def slog.Level) {
	l.level = logLevel(def)
	l.format = "text"
	f.Var(&l.level, "log-level", "least severe messages logged: debug, info, warn or error")
	f.Var(&l.format, "log-format", `log lines as "text" (key=value) or "json" (one object a line)`)
}

// logger returns the logger the flags describe, writing to w.
func (l *logFlags) logger(w io.Writer) *slog.Logger {
	o := &slog.HandlerOptions{Level: slog.Level(l.level)}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// logLevels are the names --log-level takes.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// logLevel is --log-level: one of logLevels.
type logLevel slog.Level

func (l *logLevel) String() string { return strings.ToLower(slog.Level(*l).String()) }

func (l *logLevel) Set(s string) error {
	v, ok := logLevels[strings.ToLower(s)]
	if !ok {
		return fmt.Errorf("%q is not debug, info, warn or error", s)
	}
	*l = logLevel(v)
	return nil
}

func (l *logLevel) Type() string { return "level" }

// logFormat is --log-format: text or json.
type logFormat string

func (f *logFormat) String() string { return string(*f) }

func (f *logFormat) Set(s string) error {
	if s != "text" && s != "json" {
		return fmt.Errorf("%q is not text or json", s)
	}
	*f = logFormat(s)
	return nil
}

func (f *logFormat) Type() string { return "format" }
