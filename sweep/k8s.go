package sweep

import (
	"bytes"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/koopq/koopq/internal/plural"
)

// Kubernetes objects, only the fields koopq sets (the tests decode the
// output into the official k8s.io/api types to check it).

type k8sMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

type k8sConfigMap struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   k8sMeta           `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
}

type k8sPVC struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		AccessModes      []string `yaml:"accessModes"`
		StorageClassName *string  `yaml:"storageClassName,omitempty"`
		Resources        struct {
			Requests map[string]string `yaml:"requests"`
		} `yaml:"resources"`
	} `yaml:"spec"`
}

type k8sEnv struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type k8sMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type k8sContainer struct {
	Name         string     `yaml:"name"`
	Image        string     `yaml:"image"`
	Command      []string   `yaml:"command"`
	Env          []k8sEnv   `yaml:"env"`
	Resources    k8sRes     `yaml:"resources"`
	VolumeMounts []k8sMount `yaml:"volumeMounts"`
}

type k8sRes struct {
	Requests map[string]string `yaml:"requests"`
	Limits   map[string]string `yaml:"limits,omitempty"`
}

type k8sVolume struct {
	Name      string `yaml:"name"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap,omitempty"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim,omitempty"`
}

type k8sJob struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
	Spec       struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          int    `yaml:"completions"`
		Parallelism          int    `yaml:"parallelism"`
		BackoffLimitPerIndex int    `yaml:"backoffLimitPerIndex"`
		Template             struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				RestartPolicy string         `yaml:"restartPolicy"`
				Containers    []k8sContainer `yaml:"containers"`
				Volumes       []k8sVolume    `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// Paths inside the pods.
const (
	k8sSpecDir = "/etc/koopq"
	k8sWorkDir = "/work"
)

// KubernetesManifests returns a multi-document YAML with a ConfigMap holding
// the spec text, a PersistentVolumeClaim for datasets (data/) and run
// directories (runs/<sweep name>/), and an Indexed Job with one completion
// per run: the pod with completion index i executes run i of the spec
// (`koopq sweep exec` reads JOB_COMPLETION_INDEX). Runs already done finish
// at once, so the whole Job can be applied again to finish a sweep.
func KubernetesManifests(s *Spec, specText []byte, runs []Run) ([]byte, error) {
	k := s.Kubernetes
	if k.Image == "" {
		return nil, fmt.Errorf("kubernetes.image: missing (a container image with koopq on PATH)")
	}
	name := "koopq-" + sanitize(s.Name)
	labels := map[string]string{"app.kubernetes.io/name": "koopq", "koopq.dev/sweep": sanitize(s.Name)}
	meta := func(n string) k8sMeta { return k8sMeta{Name: n, Namespace: k.Namespace, Labels: labels} }

	cm := k8sConfigMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta(name + "-spec"),
		Data: map[string]string{"sweep.yaml": string(specText)}}

	pvc := k8sPVC{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: meta(name + "-work")}
	pvc.Spec.AccessModes = []string{"ReadWriteMany"}
	if k.StorageClass != "" {
		sc := k.StorageClass
		pvc.Spec.StorageClassName = &sc
	}
	storage := k.Storage
	if storage == "" {
		storage = "20Gi"
	}
	pvc.Spec.Resources.Requests = map[string]string{"storage": storage}

	threads := s.ThreadsPerRun()
	par := k.Parallelism
	if par <= 0 || par > len(runs) {
		par = len(runs)
	}
	backoff := 3
	if k.BackoffLimitPerIndex != nil {
		backoff = *k.BackoffLimitPerIndex
	}
	job := k8sJob{APIVersion: "batch/v1", Kind: "Job", Metadata: meta(name)}
	job.Spec.CompletionMode = "Indexed"
	job.Spec.Completions = len(runs)
	job.Spec.Parallelism = par
	job.Spec.BackoffLimitPerIndex = backoff
	job.Spec.Template.Metadata.Labels = labels
	job.Spec.Template.Spec.RestartPolicy = "Never"
	req := map[string]string{"cpu": strconv.Itoa(threads)}
	if k.Memory != "" {
		req["memory"] = k.Memory
	}
	job.Spec.Template.Spec.Containers = []k8sContainer{{
		Name:  "train",
		Image: k.Image,
		Command: []string{"koopq", "sweep", "exec", "--spec", k8sSpecDir + "/sweep.yaml",
			"--out", k8sWorkDir + "/runs/" + sanitize(s.Name), "--data-root", k8sWorkDir + "/data", "--threads", strconv.Itoa(threads)},
		Env:          []k8sEnv{{Name: "OPENBLAS_NUM_THREADS", Value: strconv.Itoa(threads)}},
		Resources:    k8sRes{Requests: req},
		VolumeMounts: []k8sMount{{Name: "spec", MountPath: k8sSpecDir, ReadOnly: true}, {Name: "work", MountPath: k8sWorkDir}},
	}}
	specVol := k8sVolume{Name: "spec"}
	specVol.ConfigMap = &struct {
		Name string `yaml:"name"`
	}{cm.Metadata.Name}
	workVol := k8sVolume{Name: "work"}
	workVol.PersistentVolumeClaim = &struct {
		ClaimName string `yaml:"claimName"`
	}{pvc.Metadata.Name}
	job.Spec.Template.Spec.Volumes = []k8sVolume{specVol, workVol}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# koopq sweep %q on Kubernetes: %s as one Indexed Job (completion index = run index).\n", s.Name, plural.Count(len(runs), "run"))
	fmt.Fprintf(&buf, "# Put the datasets on the volume %s under data/ (paths as in the spec); results land under runs/%s/.\n",
		pvc.Metadata.Name, sanitize(s.Name))
	for i, obj := range []any{cm, pvc, job} {
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(obj); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
