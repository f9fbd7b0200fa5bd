package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// dashboardVars stand for the dashboard's variables when its queries are
// parsed: Grafana's rate interval and the template variables ($job,
// $instance: regular expressions, "All" being .*).
var dashboardVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$instance", ".*", "$job", ".*")

// checkDashboard parses every query of a Grafana dashboard (its panels'
// targets and its query variables' label_values selectors) with
// Prometheus's PromQL parser, and returns how many it parsed.
func checkDashboard(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	var errs []error
	n := 0
	parse := func(what, expr string) {
		n++
		if _, err := promqlParser.ParseExpr(dashboardVars.Replace(expr)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %q: %w", path, what, expr, err))
		}
	}
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			parse("panel "+p.Title, t.Expr)
		}
	}
	for _, v := range d.Templating.List {
		// label_values(SELECTOR, LABEL): the selector is PromQL.
		inner, ok := strings.CutPrefix(v.Definition, "label_values(")
		if i := strings.LastIndexByte(inner, ','); ok && i > 0 {
			parse("variable "+v.Name, inner[:i])
		} else {
			errs = append(errs, fmt.Errorf("%s: variable %s: %q is not label_values(SELECTOR, LABEL)", path, v.Name, v.Definition))
		}
	}
	if n == 0 {
		errs = append(errs, fmt.Errorf("%s: no query", path))
	}
	return n, errors.Join(errs...)
}
