package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// serviceMonitor is the part of prometheus-operator's ServiceMonitor
// (monitoring.coreos.com/v1, a custom resource: k8s.io/api has no type for
// it) that the chart writes. Decoded strictly, a field the chart adds that
// is not here fails: add it here after checking the CRD has it.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port      string `json:"port"`
			Path      string `json:"path"`
			Interval  string `json:"interval"`
			Scheme    string `json:"scheme"`
			TLSConfig *struct {
				CA struct {
					Secret corev1.SecretKeySelector `json:"secret"`
				} `json:"ca"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// helmCase is a set of values the chart is rendered with, and what the
// rendering must give.
type helmCase struct {
	name   string
	values string
	fail   string // the rendering must fail with this
	check  func(r rendered) error
}

// rendered is one rendering of the chart: its objects and the strato
// command lines of its containers, by container name.
type rendered struct {
	objs []object
	cmds map[string][][]string
}

func (r rendered) count(kind string) int {
	n := 0
	for _, o := range r.objs {
		if o.kind == kind {
			n++
		}
	}
	return n
}

// every checks that each command line of container has (or, with want
// false, has not) the flag.
func (r rendered) every(container, flag string, want bool) error {
	if len(r.cmds[container]) == 0 {
		return fmt.Errorf("no %s container", container)
	}
	for _, c := range r.cmds[container] {
		if slices.Contains(c, flag) != want {
			return fmt.Errorf("%s: %s: %s given: %v, want %v", container, strings.Join(c, " "), flag, !want, want)
		}
	}
	return nil
}

func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

var helmCases = []helmCase{
	{
		name: "defaults",
		check: func(r rendered) error {
			var errs []error
			for _, c := range []string{"meta", "datanode"} {
				errs = append(errs, r.every(c, "--tls-cert", true), r.every(c, "--tls-ca", true))
			}
			errs = append(errs, r.every("s3", "--tls-ca", true), r.every("s3", "--token-file", true),
				r.every("tls", "issue", true), r.every("datanode", "--rack", false), r.every("meta", "--id", false))
			if n := len(r.cmds["tls"]); n != 2 {
				errs = append(errs, fmt.Errorf("%d init containers issuing certificates, want 2 (meta, datanode)", n))
			}
			for _, c := range r.cmds["meta"] {
				if a := flagValue(c, "--auth"); a != "token" {
					errs = append(errs, fmt.Errorf("meta --auth %q, want token", a))
				}
				if p := flagValue(c, "--peers"); strings.Count(p, "=") != 3 || !strings.Contains(p, "1=strato-meta-0.strato-meta.strato.svc.cluster.local:9860") {
					errs = append(errs, fmt.Errorf("meta --peers %q: want 3 voters, 1 the pod strato-meta-0", p))
				}
			}
			if n := r.count("PodDisruptionBudget"); n != 3 {
				errs = append(errs, fmt.Errorf("%d PodDisruptionBudgets, want 3", n))
			}
			if n := r.count("ServiceMonitor"); n != 0 {
				errs = append(errs, fmt.Errorf("%d ServiceMonitors, want none", n))
			}
			for _, o := range r.objs {
				if o.kind == "StatefulSet" {
					s := o.value.(*appsv1.StatefulSet)
					if len(s.Spec.Template.Spec.TopologySpreadConstraints) == 0 {
						errs = append(errs, fmt.Errorf("StatefulSet %s: no topology spread constraints", o.name))
					}
					if o.name == "strato-meta" && *s.Spec.Replicas != 3 {
						errs = append(errs, fmt.Errorf("meta: %d replicas, want 3", *s.Spec.Replicas))
					}
					if o.name == "strato-meta" && s.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
						errs = append(errs, errors.New("meta's probes are not HTTPS with TLS on"))
					}
				}
			}
			return errors.Join(errs...)
		},
	},
	{
		name: "racks and a ServiceMonitor",
		values: `
datanode:
  replicas: 2
  racks:
    - {nodeLabelValue: zone-a}
    - {nodeLabelValue: zone-b, replicas: 4}
    - {nodeLabelValue: Zone_C.1, rack: /dc1/c, name: c}
  storage: {storageClassName: fast-ssd}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
imagePullSecrets: [{name: registry}]
auth: {consoleTokenSecret: strato-console-token}
meta:
  nodeSelector: {disk: ssd}
  tolerations: [{key: dedicated, operator: Equal, value: strato, effect: NoSchedule}]
  resources: {requests: {cpu: "2"}, limits: {memory: 8Gi}}
s3: {credentialsSecret: strato-s3-keys, tlsSecret: strato-s3-tls, service: {type: LoadBalancer, port: 443}}
`,
		check: func(r rendered) error {
			var errs []error
			want := map[string]struct {
				rack, zone string
				replicas   int32
			}{
				"strato-datanode-zone-a": {"/zone-a", "zone-a", 2},
				"strato-datanode-zone-b": {"/zone-b", "zone-b", 4},
				"strato-datanode-c":      {"/dc1/c", "Zone_C.1", 2},
			}
			seen := 0
			for _, o := range r.objs {
				s, ok := o.value.(*appsv1.StatefulSet)
				if !ok || o.name == "strato-meta" {
					continue
				}
				seen++
				w, ok := want[o.name]
				if !ok {
					errs = append(errs, fmt.Errorf("datanode StatefulSet %s not expected", o.name))
					continue
				}
				p := s.Spec.Template.Spec
				if rack := flagValue(p.Containers[0].Args, "--rack"); rack != w.rack {
					errs = append(errs, fmt.Errorf("%s: --rack %q, want %q", o.name, rack, w.rack))
				}
				if *s.Spec.Replicas != w.replicas {
					errs = append(errs, fmt.Errorf("%s: %d replicas, want %d", o.name, *s.Spec.Replicas, w.replicas))
				}
				if p.Affinity == nil || p.Affinity.NodeAffinity == nil ||
					p.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != w.zone {
					errs = append(errs, fmt.Errorf("%s: not pinned to the nodes of %s", o.name, w.zone))
				}
				if sc := s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName; sc == nil || *sc != "fast-ssd" {
					errs = append(errs, fmt.Errorf("%s: storage class %v, want fast-ssd", o.name, sc))
				}
			}
			errs = append(errs, r.every("meta", "--console-token-file", true), r.every("s3", "--credentials", true),
				r.every("s3", "--tls-cert", true))
			if seen != 3 {
				errs = append(errs, fmt.Errorf("%d datanode StatefulSets, want 3", seen))
			}
			n := 0
			for _, o := range r.objs {
				if sm, ok := o.value.(*serviceMonitor); ok {
					n++
					if sm.APIVersion != "monitoring.coreos.com/v1" || sm.Metadata.Labels["release"] != "prometheus" ||
						len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http" || sm.Spec.Endpoints[0].Path != "/metrics" {
						errs = append(errs, fmt.Errorf("ServiceMonitor %s: %+v", o.name, sm))
					}
					if https := sm.Spec.Endpoints[0].Scheme == "https"; https != (o.name == "strato-meta") {
						errs = append(errs, fmt.Errorf("ServiceMonitor %s: scheme %q", o.name, sm.Spec.Endpoints[0].Scheme))
					}
					if !selectsService(r.objs, sm.Spec.Selector.MatchLabels, sm.Spec.Endpoints[0].Port) {
						errs = append(errs, fmt.Errorf("ServiceMonitor %s selects no service with port %s, or several", o.name, sm.Spec.Endpoints[0].Port))
					}
				}
			}
			if n != 3 {
				errs = append(errs, fmt.Errorf("%d ServiceMonitors, want 3", n))
			}
			return errors.Join(errs...)
		},
	},
	{
		name: "plaintext, no authentication",
		values: `
tls: {enabled: false}
auth: {mode: none}
meta: {replicas: 5, extraArgs: [--trash-interval, 48h]}
s3: {replicas: 1}
`,
		check: func(r rendered) error {
			var errs []error
			for _, c := range []string{"meta", "datanode", "s3"} {
				errs = append(errs, r.every(c, "--tls-ca", false))
			}
			errs = append(errs, r.every("s3", "--token-file", false), r.every("meta", "--trash-interval", true))
			if n := len(r.cmds["tls"]); n != 0 {
				errs = append(errs, fmt.Errorf("%d certificate init containers without TLS", n))
			}
			if n := r.count("PodDisruptionBudget"); n != 2 {
				errs = append(errs, fmt.Errorf("%d PodDisruptionBudgets, want 2 (none for one gateway)", n))
			}
			for _, c := range r.cmds["meta"] {
				if p := flagValue(c, "--peers"); strings.Count(p, "=") != 5 {
					errs = append(errs, fmt.Errorf("meta --peers %q: want 5 voters", p))
				}
			}
			return errors.Join(errs...)
		},
	},
	{
		name:   "a misspelt value",
		values: "datanode: {replica: 5}\n",
		fail:   "at '/datanode': additional properties 'replica' not allowed",
	},
	{
		name:   "a rack path that is not a path",
		values: "datanode: {racks: [{nodeLabelValue: a, rack: rack1}]}\n",
		fail:   "at '/datanode/racks/0/rack': 'rack1' does not match pattern",
	},
	{
		name:   "tokens without TLS",
		values: "tls: {enabled: false}\n",
		fail:   "auth.mode token needs tls.enabled",
	},
}

// selectsService: exactly one Service has every label of sel and a port
// named port.
func selectsService(objs []object, sel map[string]string, port string) bool {
	n := 0
	for _, o := range objs {
		s, ok := o.value.(*corev1.Service)
		if !ok {
			continue
		}
		match := true
		for k, v := range sel {
			match = match && s.Labels[k] == v
		}
		if match && slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == port }) {
			n++
		}
	}
	return n == 1
}

// checkHelm renders the chart in dir with each of helmCases' values, as
// `helm template strato CHART --namespace strato` would, decodes every
// document strictly and checks what each must give. It returns the strato
// command lines of all renderings and the number of cases.
func checkHelm(dir string) ([]command, int, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", dir, err)
	}
	var (
		cmds []command
		errs []error
	)
	// helm lint's own rules (Chart.yaml, values and their schema,
	// templates): a warning or an error fails.
	for _, m := range lint.All(dir, nil, "strato", false).Messages {
		if m.Severity >= support.WarningSev {
			errs = append(errs, fmt.Errorf("helm lint: %s: %w", m.Path, m.Err))
		}
	}
	for _, c := range helmCases {
		out, err := renderHelm(ch, []byte(c.values))
		if c.fail != "" {
			switch {
			case err == nil:
				errs = append(errs, fmt.Errorf("%s (%s): rendered, want the error %q", dir, c.name, c.fail))
			case !strings.Contains(err.Error(), c.fail):
				errs = append(errs, fmt.Errorf("%s (%s): rendered with error %w, want %q", dir, c.name, err, c.fail))
			}
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", dir, c.name, err))
			continue
		}
		names := make([]string, 0, len(out))
		for name := range out {
			names = append(names, name)
		}
		sort.Strings(names)
		r := rendered{cmds: map[string][][]string{}}
		for _, name := range names {
			if !strings.HasSuffix(name, ".yaml") {
				continue
			}
			where := fmt.Sprintf("%s (%s)", name, c.name)
			cs, objs, err := checkManifests(where, out[name])
			errs = append(errs, err)
			cmds = append(cmds, cs...)
			r.objs = append(r.objs, objs...)
			for _, o := range objs {
				if o.pod == nil {
					continue
				}
				for _, ct := range append(slices.Clone(o.pod.Spec.InitContainers), o.pod.Spec.Containers...) {
					if a, err := commandLine(ct.Command, ct.Args); err == nil {
						r.cmds[ct.Name] = append(r.cmds[ct.Name], a)
					}
				}
			}
		}
		if len(r.objs) == 0 {
			errs = append(errs, fmt.Errorf("%s (%s): rendered nothing", dir, c.name))
			continue
		}
		if err := c.check(r); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", dir, c.name, err))
		}
	}
	return cmds, len(helmCases), errors.Join(errs...)
}

// renderHelm renders the chart with values (YAML) over its defaults, as
// the release strato in the namespace strato.
func renderHelm(ch *chart.Chart, values []byte) (map[string]string, error) {
	vals := map[string]any{}
	if err := yaml.UnmarshalStrict(values, &vals); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "strato", Namespace: "strato", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// printHelm writes the chart in dir rendered with the values file (-: none)
// as one multi-document YAML stream.
func printHelm(w io.Writer, dir, valuesFile string) error {
	ch, err := loader.Load(dir)
	if err != nil {
		return err
	}
	var values []byte
	if valuesFile != "-" {
		if values, err = os.ReadFile(valuesFile); err != nil {
			return err
		}
	}
	out, err := renderHelm(ch, values)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasSuffix(name, ".yaml") && strings.TrimSpace(out[name]) != "" {
			fmt.Fprintf(w, "---\n# Source: %s\n%s\n", name, out[name])
		}
	}
	return nil
}
