package run

import (
	"encoding/json"
	"testing"
)

// FuzzParseConfig feeds arbitrary text to the config-file parser
// (LoadConfigFile's): an error or a config, never a panic; a config it
// accepts serializes back to JSON and parses again to the same settings.
// Seeds: testdata/fuzz/FuzzParseConfig (valid and invalid files).
// Run: go test -run '^$' -fuzz FuzzParseConfig -fuzztime 30s ./run/
func FuzzParseConfig(f *testing.F) {
	f.Add("cql: {batch: 32}\n")
	f.Fuzz(func(t *testing.T, text string) {
		base := DefaultTrainConfig()
		cfg, err := ParseConfig([]byte(text), base, "")
		if err != nil {
			return
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("accepted config does not serialize: %v", err)
		}
		back, err := ParseConfig(js, base, "")
		if err != nil {
			t.Fatalf("accepted config's JSON does not parse again: %v\n%s", err, js)
		}
		if d, err := DiffConfigs(cfg, back); err != nil || len(d) != 0 {
			t.Errorf("round trip differs: %v %v", d, err)
		}
	})
}
