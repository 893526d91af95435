// Package faults breaks the engine's surroundings on purpose and checks
// what holds. It has no code of its own, only tests, each one a fault a
// production engine meets sooner or later:
//
//   - TestAPIServerKilledDuringSync: the API server is killed in the middle
//     of a 500-object sync and started again; the same sync call finishes,
//     every object holds its desired content, the app is Synced, and no hook
//     ran twice.
//   - TestWatchExpiryRelists: a restarted API server answers the cache's
//     watch with 410 Gone; the cache relists and ends with exactly the live
//     objects, including the changes made while it could not watch.
//   - TestGitServerDown and TestGitServerHung: the Git server refuses
//     connections, or accepts them and never answers; a refresh fails within
//     the source's timeout with a typed error, and the running engine keeps
//     the last good status and reports the failure without credentials.
//   - TestRedisDownRendersStillWork and TestRedisHungRendersStillWork: the
//     shared render cache dies or freezes; renders still succeed within a
//     bound, the failure is counted, and the cache is used again once Redis
//     is back.
//   - TestContextCancelledMidSyncResumes: the host's context ends in the
//     middle of a wave of an engine sync, with applies in flight; the sync
//     ends Running and resumes from its State without writing the finished
//     waves again or running a hook twice.
//   - TestContextCancelledDuringHookCreation: the API server creates a hook
//     but its answer is lost and the context ends; the resumed sync adopts
//     that hook instead of creating it a second time.
//
// The package starts its own local cluster (testenv.RunMain in TestMain)
// because some of these tests stop the API server, which must not disturb
// other packages' tests. Its tests run one after another for the same
// reason.
package faults
