package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	tests := flag.String("tests", "../alerts_test.yml", "test file (promtool's format) naming the rule files")
	dashboard := flag.String("dashboard", "../../grafana/dashboards/strato.json", "Grafana dashboard whose queries must parse")
	flag.Parse()
	n, err := check(*tests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "alert rules:", err)
		os.Exit(1)
	}
	fmt.Printf("alert rules: %s: %d test groups passed\n", *tests, n)
	if n, err = checkDashboard(*dashboard); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
	fmt.Printf("dashboard: %s: %d queries parsed\n", *dashboard, n)
}
