package rundir

// The augment value a run's config.json records for plain CQL is "cql";
// "none", its name before, is still found in run directories of older
// koopqs. Tables, plots and run names label both "cql".
const (
	AugmentCQL       = "cql"
	AugmentCQLLegacy = "none"
)

// IsPlainCQL tells whether a recorded augment value is plain CQL (either
// name).
func IsPlainCQL(augment string) bool { return augment == AugmentCQL || augment == AugmentCQLLegacy }

// MethodLabel is the name tables, plots and run names give a recorded
// augment value: "cql" for plain CQL under either name, else the value
// itself.
func MethodLabel(augment string) string {
	if IsPlainCQL(augment) {
		return AugmentCQL
	}
	return augment
}
