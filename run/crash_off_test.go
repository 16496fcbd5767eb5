//go:build !crashtest

package run

import (
	"context"
	"testing"
)

// A normal build has no crash hooks: with CrashEnv set to select a point,
// reaching it signals nothing and does not wait.
func TestNormalBuildIgnoresCrashEnv(t *testing.T) {
	t.Setenv(CrashEnv, "step:1:TERM")
	if CrashHooks {
		t.Fatal("CrashHooks is true in a build without -tags crashtest")
	}
	if s := crashPoint("step"); s != 0 {
		t.Fatalf("crashPoint sent %v", s)
	}
	crashPointStop(context.Background(), "step") // returns at once
	CrashPoint(context.Background(), "koopman-epoch")
}
