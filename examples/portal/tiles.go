package main

// tile is one count of the list's tiles, linking to the list filtered by
// its status.
type tile struct {
	Kind, Status string
	Count        int
	Href         string
	Active       bool
}

// tilesOf makes the tiles of l: one per sync and health status, in the
// order of the filter's choices, with the other filters of q kept.
func tilesOf(l appList, q listQuery, syncs, healths []string) []tile {
	var out []tile
	add := func(kind string, statuses []string, counts map[string]int, active string) {
		for _, st := range statuses {
			nq := q
			nq.Page = 1
			if kind == "sync" {
				nq.Sync = st
			} else {
				nq.Health = st
			}
			if active == st { // a second click lifts the filter
				if kind == "sync" {
					nq.Sync = ""
				} else {
					nq.Health = ""
				}
			}
			href := "/"
			if v := nq.values(1); v != "" {
				href += "?" + v
			}
			out = append(out, tile{Kind: kind, Status: st, Count: counts[st], Href: href, Active: active == st})
		}
	}
	add("sync", syncs, l.SyncCounts, q.Sync)
	add("health", healths, l.HealthCounts, q.Health)
	return out
}
