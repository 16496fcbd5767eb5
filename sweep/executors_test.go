package sweep

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (go test ./sweep/ -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test ./sweep/ -update rewrites it after review):\n%s", name, got)
	}
}

const k8sSpec = testSpec + `
threads: 2
kubernetes:
  image: registry.example.org/koopq:1.0
  namespace: rl
  parallelism: 4
  storage: 50Gi
  storage_class: nfs
  memory: 4Gi
slurm:
  partition: cpu
  time: "12:00:00"
  mem: 4G
  max_parallel: 8
  extra: ["--qos=long"]
`

func TestSlurmScriptGolden(t *testing.T) {
	s, runs := mustParse(t, k8sSpec, Checker{})
	idx := []int{0, 1, 2, 5, 8}
	script := SlurmScript(s, "/scratch/sweeps/t", idx, SlurmOptions{Koopq: "/opt/koopq/bin/koopq",
		SpecFile: "/scratch/sweeps/t/.sweep/spec-abc.yaml", DataRoot: "/data sets", Threads: s.ThreadsPerRun()})
	golden(t, "slurm.sbatch", []byte(script))
	for _, want := range []string{"#SBATCH --array=0-2,5,8%8", "#SBATCH --cpus-per-task=2", "#SBATCH --requeue",
		"#SBATCH --output=/scratch/sweeps/t/.sweep/slurm/%A_%a.out", "--data-root '/data sets'", `--index "$SLURM_ARRAY_TASK_ID"`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	_ = runs
	if strings.Contains(script, "--allow-dirty") {
		t.Error("--allow-dirty in a script of a sweep run without it")
	}
	allowed := SlurmScript(s, "/scratch/sweeps/t", idx, SlurmOptions{Koopq: "/opt/koopq/bin/koopq",
		SpecFile: "/scratch/sweeps/t/.sweep/spec-abc.yaml", DataRoot: "/data sets", Threads: s.ThreadsPerRun(), AllowDirty: true})
	if !strings.Contains(allowed, `--threads 2 --allow-dirty --index "$SLURM_ARRAY_TASK_ID"`) {
		t.Errorf("AllowDirty: the tasks' sweep exec lacks --allow-dirty:\n%s", allowed)
	}
}

// The manifests decode, strictly (unknown fields are errors), into the
// official Kubernetes API types, and the fields that matter hold what the
// spec says.
func TestKubernetesManifests(t *testing.T) {
	s, runs := mustParse(t, k8sSpec, Checker{})
	y, err := KubernetesManifests(s, []byte(k8sSpec), runs)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "k8s.yaml", y)
	docs := strings.Split(string(y), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d YAML documents, want 3", len(docs))
	}
	var cm corev1.ConfigMap
	var pvc corev1.PersistentVolumeClaim
	var job batchv1.Job
	for i, obj := range []any{&cm, &pvc, &job} {
		if err := yaml.UnmarshalStrict([]byte(docs[i]), obj); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
	}
	if cm.Kind != "ConfigMap" || cm.Name != "koopq-t-spec" || cm.Namespace != "rl" {
		t.Errorf("configmap %+v", cm.ObjectMeta)
	}
	// The spec inside the ConfigMap expands to the same runs.
	_, back, err := Parse([]byte(cm.Data["sweep.yaml"]), Checker{})
	if err != nil || len(back) != len(runs) || back[8].Name != runs[8].Name {
		t.Errorf("spec from the ConfigMap: %v (%d runs)", err, len(back))
	}
	if pvc.Kind != "PersistentVolumeClaim" || pvc.Spec.Resources.Requests.Storage().String() != "50Gi" ||
		pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "nfs" || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("pvc %+v", pvc.Spec)
	}
	js := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion ||
		*js.Completions != int32(len(runs)) || *js.Parallelism != 4 || js.BackoffLimitPerIndex == nil || *js.BackoffLimitPerIndex != 3 {
		t.Errorf("job spec %+v", js)
	}
	pod := js.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	cmd := strings.Join(c.Command, " ")
	if c.Image != "registry.example.org/koopq:1.0" || cmd != "koopq sweep exec --spec /etc/koopq/sweep.yaml --out /work/runs/t --data-root /work/data --threads 2" {
		t.Errorf("container %s %s", c.Image, cmd)
	}
	if c.Resources.Requests.Cpu().String() != "2" || c.Resources.Requests.Memory().String() != "4Gi" {
		t.Errorf("requests %v", c.Resources.Requests)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	if vols["spec"].ConfigMap == nil || vols["spec"].ConfigMap.Name != cm.Name ||
		vols["work"].PersistentVolumeClaim == nil || vols["work"].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("volumes %+v", pod.Volumes)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["spec"] != "/etc/koopq" || mounts["work"] != "/work" {
		t.Errorf("mounts %v", mounts)
	}

	s.Kubernetes.Image = ""
	if _, err := KubernetesManifests(s, []byte(k8sSpec), runs); err == nil || !strings.Contains(err.Error(), "kubernetes.image") {
		t.Errorf("no image: %v", err)
	}
}
