// Command validate checks strato's deployment files without a container
// runtime or a Kubernetes cluster (make deploy-check):
//
//   - deploy/compose.yaml, alone and with deploy/compose.ci.yaml over it, is
//     loaded by compose-go, the loader of `docker compose` itself, which
//     validates it against the Compose specification's JSON schema
//     (anchors, interpolation, merges included); every service is on the
//     host network, every strato server's --listen and --http on 127.0.0.1,
//     no two on one port;
//   - every document of deploy/k8s/*.yaml is decoded strictly into the
//     Kubernetes API's own Go types (k8s.io/api): an unknown field, a
//     wrong type or an unknown kind fails, as kubeconform -strict would
//     (kubeconform needs its schemas from GitHub, which this check does not);
//     every container has readiness on /readyz and liveness on /healthz;
//   - deploy/helm/strato is rendered as `helm template` would (Helm's own
//     chart loader and template engine) with its default values and a few
//     others, and every document decoded as those of deploy/k8s (helm lint's
//     rules first); what each
//     set of values must give is checked (helm.go);
//   - every strato command line in them is parsed by the strato binary
//     given with -strato (`strato ARGS... --help` fails on an unknown flag);
//   - the Prometheus and Grafana provisioning files are YAML, the dashboard
//     is JSON (test/observability_test.go checks that its queries name
//     metrics the servers serve).
//
// It is a module of its own, so that its dependencies (compose-go,
// k8s.io/api, Helm) stay out of strato's.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	dir := flag.String("dir", ".", "the deploy directory")
	strato := flag.String("strato", "", "the strato binary whose flags the command lines must use (default: not checked)")
	template := flag.String("helm-template", "", "print the Helm chart rendered with this values file (\"-\": the chart's defaults) and exit, as helm template strato deploy/helm/strato --namespace strato")
	flag.Parse()
	if *template != "" {
		if err := printHelm(os.Stdout, filepath.Join(*dir, "helm", "strato"), *template); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var errs []error
	compose := filepath.Join(*dir, "compose.yaml")
	cmds, err := checkCompose(compose)
	errs = append(errs, err)
	ci, err := checkCompose(compose, filepath.Join(*dir, "compose.ci.yaml"))
	cmds = append(cmds, ci...)
	errs = append(errs, err)
	files, _ := filepath.Glob(filepath.Join(*dir, "k8s", "*.yaml"))
	if len(files) == 0 {
		errs = append(errs, errors.New("no deploy/k8s/*.yaml"))
	}
	for _, f := range files {
		c, err := checkKubernetes(f)
		cmds = append(cmds, c...)
		errs = append(errs, err)
	}
	for _, f := range []string{"prometheus/prometheus.yml", "prometheus/prometheus-k8s.yml",
		"grafana/provisioning/datasources/prometheus.yaml", "grafana/provisioning/dashboards/strato.yaml"} {
		b, err := os.ReadFile(filepath.Join(*dir, f))
		if err == nil {
			var v map[string]any
			err = yaml.UnmarshalStrict(b, &v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
	}
	helmCmds, charts, err := checkHelm(filepath.Join(*dir, "helm", "strato"))
	cmds = append(cmds, helmCmds...)
	errs = append(errs, err)
	errs = append(errs, checkDashboard(filepath.Join(*dir, "grafana", "dashboards", "strato.json")))
	if *strato != "" {
		for _, c := range cmds {
			out, err := exec.Command(*strato, append(c.args, "--help")...).CombinedOutput()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: strato %s: %w\n%s", c.where, strings.Join(c.args, " "), err, firstLine(out)))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("deploy: compose, %d Kubernetes files, the Helm chart with %d sets of values, %d strato command lines, Prometheus and Grafana files: valid\n", len(files), charts, len(cmds))
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// command is a strato command line found in a deployment file.
type command struct {
	where string
	args  []string
}

// checkCompose loads the compose files given (the later overriding the
// earlier) as one project: every strato service runs on the host network
// with every address flag on 127.0.0.1, and no two services share a port.
func checkCompose(paths ...string) ([]command, error) {
	where := strings.Join(paths, " + ")
	opts, err := cli.NewProjectOptions(paths, cli.WithWorkingDirectory(filepath.Dir(paths[0])), cli.WithName("strato"))
	if err != nil {
		return nil, err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var (
		cmds []command
		errs []error
	)
	ports := map[string]string{}
	for name, s := range p.Services {
		if s.NetworkMode != "host" {
			errs = append(errs, fmt.Errorf("%s: service %s: network_mode %q, want host", where, name, s.NetworkMode))
		}
		if !strings.HasPrefix(s.Image, "strato") {
			continue
		}
		if len(s.Command) == 0 {
			return nil, fmt.Errorf("%s: service %s runs strato with no command", where, name)
		}
		for i, a := range s.Command[:len(s.Command)-1] {
			if a != "--listen" && a != "--http" {
				continue
			}
			addr := s.Command[i+1]
			if !strings.HasPrefix(addr, "127.0.0.1:") {
				errs = append(errs, fmt.Errorf("%s: service %s: %s %s, want 127.0.0.1:PORT", where, name, a, addr))
			}
			if other, dup := ports[addr]; dup {
				errs = append(errs, fmt.Errorf("%s: services %s and %s both listen on %s", where, other, name, addr))
			}
			ports[addr] = name
		}
		cmds = append(cmds, command{where: where + ": service " + name, args: s.Command})
	}
	if len(cmds) < 7 {
		errs = append(errs, fmt.Errorf("%s: %d strato services, want 3 meta, 3 datanodes and the S3 gateway", where, len(cmds)))
	}
	return cmds, errors.Join(errs...)
}

// checkKubernetes decodes every document of path strictly.
func checkKubernetes(path string) ([]command, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cmds, _, err := checkManifests(path, string(b))
	return cmds, err
}

// object is a document of a manifest, decoded.
type object struct {
	kind, name string
	pod        *corev1.PodTemplateSpec // of a StatefulSet or Deployment
	value      any
}

// checkManifests decodes every document of a manifest strictly into the
// Kubernetes API's types (a ServiceMonitor, a custom resource, into the
// fields of its CRD the chart uses), checks the probes of every container,
// and returns the strato command lines of its containers (init containers
// too) and the objects.
func checkManifests(path, manifest string) ([]command, []object, error) {
	var (
		cmds []command
		objs []object
		errs []error
	)
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(manifest, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			errs = append(errs, fmt.Errorf("%s: document %d: %w", path, i+1, err))
			continue
		}
		var obj any
		var pod *corev1.PodTemplateSpec
		switch meta.Kind {
		case "Namespace":
			obj = &corev1.Namespace{}
		case "Service":
			obj = &corev1.Service{}
		case "Secret":
			obj = &corev1.Secret{}
		case "ConfigMap":
			obj = &corev1.ConfigMap{}
		case "StatefulSet":
			s := &appsv1.StatefulSet{}
			obj, pod = s, &s.Spec.Template
		case "Deployment":
			d := &appsv1.Deployment{}
			obj, pod = d, &d.Spec.Template
		case "PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		case "ServiceMonitor":
			obj = &serviceMonitor{}
		default:
			errs = append(errs, fmt.Errorf("%s: document %d: kind %q is not checked here", path, i+1, meta.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s (document %d): %w", path, meta.Kind, i+1, err))
			continue
		}
		objs = append(objs, object{kind: meta.Kind, name: meta.Metadata.Name, pod: pod, value: obj})
		if pod == nil {
			continue
		}
		// The servers run as 65532: a Secret's files (root's) are theirs to
		// read only through the pod's fsGroup.
		for _, v := range pod.Spec.Volumes {
			if v.Secret != nil && (pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.FSGroup == nil) {
				errs = append(errs, fmt.Errorf("%s: %s %s: Secret volume %s without the pod's fsGroup: unreadable by the servers' user",
					path, meta.Kind, meta.Metadata.Name, v.Name))
			}
		}
		for _, c := range pod.Spec.InitContainers {
			where := fmt.Sprintf("%s: %s %s init container %s", path, meta.Kind, meta.Metadata.Name, c.Name)
			args, err := commandLine(c.Command, c.Args)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			cmds = append(cmds, command{where: where, args: args})
		}
		for _, c := range pod.Spec.Containers {
			where := fmt.Sprintf("%s: %s %s container %s", path, meta.Kind, meta.Metadata.Name, c.Name)
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				errs = append(errs, fmt.Errorf("%s: no readiness probe on /readyz", where))
			}
			if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				errs = append(errs, fmt.Errorf("%s: no liveness probe on /healthz", where))
			}
			args, err := commandLine(c.Command, c.Args)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			cmds = append(cmds, command{where: where, args: args})
		}
	}
	return cmds, objs, errors.Join(errs...)
}

func stripComments(doc string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// commandLine is a container's strato arguments, with the values the pod
// would give its variables ($(VAR), Kubernetes' substitution). The image
// (deploy/Dockerfile) holds strato alone: no shell, so the command must be
// the image's entry point.
var vars = strings.NewReplacer("$(POD_IP)", "10.0.0.1", "$(POD_NAME)", "strato-meta-0", "$(POD_NAMESPACE)", "strato")

func commandLine(cmd, args []string) ([]string, error) {
	if len(cmd) != 0 {
		return nil, fmt.Errorf("command %q: the image has strato alone (no shell): give its arguments as args", cmd)
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = vars.Replace(a)
	}
	return out, nil
}

// checkDashboard parses the dashboard (test/observability_test.go checks
// that its queries name metrics the servers serve).
func checkDashboard(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d.Title == "" || len(d.Panels) == 0 {
		return fmt.Errorf("%s: no title or no panels", path)
	}
	return nil
}
