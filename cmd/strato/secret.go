package main

import (
	"fmt"
	"os"
	"strings"
)

// A server's secrets (tokens) come from a file or the environment: a
// process's command line is readable by every user of its host
// (/proc/PID/cmdline, ps), so a flag that carries a secret is kept for
// tests and warned about.

// consoleTokenEnv names the environment variable strato meta takes the
// console's token from when neither --console-token nor
// --console-token-file gives it.
const consoleTokenEnv = "STRATO_CONSOLE_TOKEN"

// secretOf returns the secret a server runs with: flag (given on the
// command line) when set, else the content of file (trimmed) when file is
// set, else $env. Giving both flag and file is a usage error, as is an
// empty file.
func secretOf(flag, flagName, file, fileFlag, env string) (string, error) {
	switch {
	case flag != "" && file != "":
		return "", usagef("--%s and --%s exclude each other", flagName, fileFlag)
	case flag != "":
		return strings.TrimSpace(flag), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", fileFlag, err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", fmt.Errorf("--%s: %s is empty", fileFlag, file)
		}
		return s, nil
	}
	return strings.TrimSpace(os.Getenv(env)), nil
}

// argvSecretWarning is logged when a secret was given as a flag.
func argvSecretWarning(flagName, fileFlag, env string) string {
	return fmt.Sprintf("--%s puts a secret on the command line, which every user of this host can read (ps, /proc); give --%s or $%s instead", flagName, fileFlag, env)
}
