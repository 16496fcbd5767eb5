package main

// Tests that keep the documentation true (docs/testing.md, "Docs that cannot
// drift"): the generated CLI reference matches the commands, the README's
// quickstart runs, and every relative link in README.md and docs/ resolves.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/koopq/koopq/internal/blas"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

// docsRegenerate is what every failure of TestCLIDocsUpToDate tells the
// reader to run.
const docsRegenerate = "run 'make docs' (or: go run ./cmd/koopq docs --out docs/cli) and commit docs/cli/"

// envWithout returns the process environment without the named variables.
func envWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			env = append(env, kv)
		}
	}
	return env
}

// mdFiles lists dir's *.md files by base name.
func mdFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	return files
}

// TestCLIDocsUpToDate regenerates the CLI reference into a temp directory
// and compares it with the committed docs/cli/, file by file.
func TestCLIDocsUpToDate(t *testing.T) {
	if got := strings.Join(blas.Available(), ","); got != "onednn,openblas,gonum" {
		t.Skipf("this build's GEMM backends are %s; the reference is generated from the full build (onednn,openblas,gonum)", got)
	}
	dir := t.TempDir()
	cmd := exec.Command(koopqBin, "docs", "--out", dir)
	cmd.Env = envWithout(docsEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("koopq docs: %v\n%s", err, out)
	}
	want, have := mdFiles(t, dir), mdFiles(t, filepath.Join(repoRoot, "docs", "cli"))
	if len(want) == 0 {
		t.Fatal("koopq docs wrote no markdown files")
	}
	var stale []string
	for name, b := range want {
		c, ok := have[name]
		switch {
		case !ok:
			stale = append(stale, name+" is missing")
		case !bytes.Equal(b, c):
			stale = append(stale, name+" differs from the commands' help")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" documents no command")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("docs/cli/ is stale: %s.\nTo regenerate: %s.", strings.Join(stale, "; "), docsRegenerate)
	}
}

// The quickstart's size flags and the values TestReadmeQuickstart gives them.
var quickstartSizes = map[string]string{
	"--transitions":        "3000",
	"--steps":              "60",
	"--bc-steps":           "20",
	"--eval-every":         "30",
	"--eval-episodes":      "2",
	"--koopman-max-epochs": "1",
}

// quickstartCommands returns the commands of the README's quickstart: the
// lines of the sh block between the quickstart markers, without comments.
func quickstartCommands(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- quickstart:begin")
	if !ok {
		t.Fatal("README.md has no '<!-- quickstart:begin' marker")
	}
	block, _, ok := strings.Cut(rest, "<!-- quickstart:end -->")
	if !ok {
		t.Fatal("README.md has no '<!-- quickstart:end -->' marker")
	}
	_, code, ok := strings.Cut(block, "```sh\n")
	if !ok {
		t.Fatal("the README's quickstart has no ```sh block")
	}
	code, _, _ = strings.Cut(code, "```")
	var cmds []string
	for _, line := range strings.Split(code, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			t.Fatalf("quickstart command %q continues on the next line; keep each command on one line", line)
		}
		cmds = append(cmds, line)
	}
	return cmds
}

// shrink rewrites the values of the quickstart's size flags.
func shrink(cmd string) string {
	f := strings.Fields(cmd)
	for i := 0; i < len(f); i++ {
		name, _, eq := strings.Cut(f[i], "=")
		v, ok := quickstartSizes[name]
		switch {
		case ok && eq:
			f[i] = name + "=" + v
		case ok && i+1 < len(f):
			f[i+1] = v
			i++
		}
	}
	return strings.Join(f, " ")
}

// TestReadmeQuickstart runs the README's quickstart in a temp directory, with
// the test's binary as bin/koopq and tiny sizes (docs/testing.md).
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := quickstartCommands(t, string(readme))
	if len(cmds) < 4 || len(cmds) > 10 {
		t.Errorf("the quickstart has %d commands, want 4 to 10", len(cmds))
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(koopqBin, filepath.Join(dir, "bin", "koopq")); err != nil {
		t.Fatal(err)
	}
	var trains int
	for _, c := range cmds {
		if c == "make build" {
			continue // bin/koopq is the test's binary
		}
		c = shrink(c)
		if strings.Contains(c, " train ") {
			trains++
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", c)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("quickstart command failed: %s\n(as run: %s)\n%v\n%s", c, c, err, out)
		}
		t.Logf("$ %s\n%s", c, lastLines(string(out), 12))
	}
	// Every train command made a finished run, and the report compares them.
	runs, _ := filepath.Glob(filepath.Join(dir, "runs", "quickstart", "*", "results.json"))
	if len(runs) != trains {
		t.Errorf("%d finished runs under runs/quickstart, want %d (one per train command)", len(runs), trains)
	}
	table, err := os.ReadFile(filepath.Join(dir, "runs", "quickstart", "report", "table.md"))
	if err != nil {
		t.Fatalf("the quickstart's report wrote no table: %v", err)
	}
	if !strings.Contains(string(table), "hopper") {
		t.Errorf("report table does not name the hopper dataset:\n%s", table)
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

var (
	// mdLink matches inline links and images, [text](target) and
	// ![alt](target), with an optional "title".
	mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// mdRefDef matches reference definitions, [label]: target.
	mdRefDef = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// htmlSrc matches src= and href= attributes of inline HTML.
	htmlSrc = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	// codeSpan matches inline code, whose brackets are no links.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
)

// linkTargets returns the link targets of a markdown text, outside fenced
// code blocks, inline code and HTML comments.
func linkTargets(md string) []string {
	var prose strings.Builder
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(line)
		if fence == "" && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
			fence = trim[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		prose.WriteString(codeSpan.ReplaceAllString(line, "``"))
		prose.WriteByte('\n')
	}
	text := regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(prose.String(), "")
	var out []string
	for _, re := range []*regexp.Regexp{mdLink, mdRefDef, htmlSrc} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives the headings of a markdown
// text: lower case, punctuation dropped, spaces as hyphens, and -1, -2, ...
// on repeats.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimLeft(line, "#")
		if h == "" || h[0] != ' ' {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocLinks checks that every relative link in README.md and docs/**/*.md
// names a file of the repository (and, for an anchor into a markdown file,
// one of its headings), and that README.md links nowhere outside it.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchorsOf := map[string]map[string]bool{}
	var links int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		anchorsOf[f] = headingAnchors(string(b))
		for _, target := range linkTargets(string(b)) {
			links++
			if regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target) {
				if rel == "README.md" {
					t.Errorf("%s: link %s leaves the repository (the README must be self-contained)", rel, target)
				}
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			path, _, _ = strings.Cut(path, "?")
			dest := f
			if path != "" {
				if strings.HasPrefix(path, "/") {
					t.Errorf("%s: link %s is absolute; use a path relative to the file", rel, target)
					continue
				}
				dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				if r, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(r, "..") {
					t.Errorf("%s: link %s points outside the repository", rel, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: no such file", rel, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, ok := anchorsOf[dest]
			if !ok {
				db, err := os.ReadFile(dest)
				if err != nil {
					t.Errorf("%s: link %s: %v", rel, target, err)
					continue
				}
				a = headingAnchors(string(db))
				anchorsOf[dest] = a
			}
			if !a[strings.ToLower(anchor)] {
				t.Errorf("%s: link %s: %s has no heading with anchor #%s", rel, target, filepath.Base(dest), anchor)
			}
		}
	}
	if links < 50 {
		t.Errorf("found only %d links in %d files; is the link parser broken?", links, len(files))
	}
}
