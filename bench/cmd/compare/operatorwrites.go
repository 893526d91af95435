package main

// writesOf is the mean writes of the apps named (all when names is nil).
func writesOf(seen map[string]appSeen, names []string) float64 {
	if names == nil {
		for name := range seen {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return 0
	}
	total := 0
	for _, name := range names {
		total += seen[name].writes
	}
	return float64(total) / float64(len(names))
}

// noopsOf is the writes of the apps named (all when names is nil) that
// changed nothing but the resourceVersion and managedFields.
func noopsOf(seen map[string]appSeen, names []string) int {
	if names == nil {
		for name := range seen {
			names = append(names, name)
		}
	}
	total := 0
	for _, name := range names {
		total += seen[name].noops
	}
	return total
}

// periodicOf is the writes of the apps named that changed only
// status.reconciledAt: the refresh, once per reconciliation interval, of
// an app whose status stayed the same.
func periodicOf(seen map[string]appSeen, names []string) int {
	total := 0
	for _, name := range names {
		total += seen[name].periodic
	}
	return total
}

// writesPerChange is the writes of the apps named (all when names is nil)
// per change of what a user sees of them (visible); 0 without a change.
func writesPerChange(seen map[string]appSeen, names []string) float64 {
	if names == nil {
		for name := range seen {
			names = append(names, name)
		}
	}
	writes, changes := 0, 0
	for _, name := range names {
		writes += seen[name].writes
		changes += seen[name].changes
	}
	if changes == 0 {
		return 0
	}
	return float64(writes) / float64(changes)
}
