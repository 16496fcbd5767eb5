package layers

import (
	"bufio"
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/koopq/koopq"

// layerLine matches a line of the "## Layers" list in docs/architecture.md:
// "- 3: `koopman`, `sac`, `learntest`".
var layerLine = regexp.MustCompile("^- (\\d+): (.*)$")

// readLayers returns each listed entry (a package path relative to the
// module, covering its subpackages) with its layer number.
func readLayers(t *testing.T, root string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	layers := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layers"
			continue
		}
		m := layerLine.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			layers[strings.TrimSuffix(p[1], "/…")] = n
		}
	}
	if len(layers) == 0 {
		t.Fatal(`docs/architecture.md has no "## Layers" list`)
	}
	return layers
}

// entryOf is the listed entry covering pkg: the longest listed prefix.
func entryOf(layers map[string]int, pkg string) (string, bool) {
	best := ""
	for e := range layers {
		if (pkg == e || strings.HasPrefix(pkg, e+"/")) && len(e) > len(best) {
			best = e
		}
	}
	return best, best != ""
}

// modulePackages walks the module for directories with non-test Go files.
func modulePackages(t *testing.T, root string) map[string]*build.Package {
	t.Helper()
	pkgs := map[string]*build.Package{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "results" || name == "docs") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(p, 0)
		if err != nil {
			return nil // no buildable Go files here
		}
		rel, _ := filepath.Rel(root, p)
		pkgs[filepath.ToSlash(rel)] = bp
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// violations lists what breaks the layering: packages in no layer, imports
// of unlisted packages and imports that do not go to a lower layer (an
// import inside one entry, env/classic → env, is allowed). imports maps
// each package (relative path) to its module-internal imports (relative).
func violations(layers map[string]int, imports map[string][]string) []string {
	var names []string
	for p := range imports {
		names = append(names, p)
	}
	sort.Strings(names)
	var out []string
	for _, p := range names {
		from, ok := entryOf(layers, p)
		if !ok {
			out = append(out, "package "+p+" is in no layer of docs/architecture.md")
			continue
		}
		for _, rel := range imports[p] {
			to, ok := entryOf(layers, rel)
			switch {
			case !ok:
				out = append(out, p+" imports "+rel+", which is in no layer")
			case to != from && layers[to] >= layers[from]:
				out = append(out, p+" (layer "+strconv.Itoa(layers[from])+") imports "+rel+" (layer "+strconv.Itoa(layers[to])+"): an arrow that does not go down")
			}
		}
	}
	return out
}

// TestImportsFollowTheLayers checks every package of the module against the
// layers of docs/architecture.md.
func TestImportsFollowTheLayers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	layers := readLayers(t, root)
	pkgs := modulePackages(t, root)
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	imports := map[string][]string{}
	for p, bp := range pkgs {
		imports[p] = nil
		for _, imp := range bp.Imports {
			if strings.HasPrefix(imp, module+"/") {
				imports[p] = append(imports[p], strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
	for _, v := range violations(layers, imports) {
		t.Error(v)
	}
}

// TestReportReadsFilesOnly: report turns run directories into tables and
// must work on results copied from anywhere, so it stands on the format
// (rundir), the statistics and internal utilities alone, never on a
// training package.
func TestReportReadsFilesOnly(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bp, err := build.ImportDir(filepath.Join(root, "report"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range bp.Imports {
		rel, ok := strings.CutPrefix(imp, module+"/")
		if ok && rel != "rundir" && rel != "stats" && !strings.HasPrefix(rel, "internal/") {
			t.Errorf("report imports %s: it may import only rundir, stats and internal packages", rel)
		}
	}
}

// violations reports an upward arrow, an arrow between two entries of one
// layer, an unlisted package and an unlisted import, and allows arrows
// inside an entry and downwards.
func TestViolations(t *testing.T) {
	layers := map[string]int{"cql": 4, "augment": 4, "sac": 3, "env": 1, "internal": 0}
	got := violations(layers, map[string][]string{
		"sac":          {"cql", "env", "internal/blas"}, // up: cql
		"cql":          {"augment", "sac"},              // same layer: augment
		"env/classic":  {"env", "internal/mujoco"},      // inside env, down
		"internal/a":   {"internal/b"},                  // inside internal
		"stray":        nil,                             // unlisted
		"augment":      {"nowhere"},                     // unlisted import
		"internal/b":   nil,
		"internal/xyz": {"internal/a"},
	})
	want := []string{
		"augment imports nowhere, which is in no layer",
		"cql (layer 4) imports augment (layer 4): an arrow that does not go down",
		"sac (layer 3) imports cql (layer 4): an arrow that does not go down",
		"package stray is in no layer of docs/architecture.md",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if e, ok := entryOf(layers, "cqlx"); ok {
		t.Errorf("cqlx matched the entry %q", e)
	}
}
