// Package rbac decides "may this subject do this" as Argo CD's API server
// does, for a host (the portal, an operator's API) that checks every call
// and shows in its UI only what the caller may do.
//
// # The configuration
//
// Load reads argocd-rbac-cm's data as Argo CD reads it:
//
//   - policy.csv, then every policy.<name>.csv key in key order (Argo CD's
//     overlays): "p, <subject>, <resource>, <action>, <object>, allow|deny"
//     grants or denies, "g, <subject>, <role>" binds a user or SSO group
//     to a role. Blank lines and lines starting with '#' are skipped;
//     fields are CSV (quotes allowed) and trimmed.
//   - policy.default: a role every subject has.
//   - policy.matchMode: glob (the default; gobwas/glob, where "*" crosses
//     "/") or regex (Go regular expressions, unanchored, as casbin's
//     regexMatch). Under regex the built-in policy's globs are rewritten
//     as the anchored expressions matching the same strings.
//   - scopes: the OIDC claims whose values are groups, a YAML list;
//     default [groups]. GroupsFromClaims reads them from a token's claims.
//   - server.rbac.log.enforce.enable: logs are always enforced (as in Argo
//     CD 3); only "true" is accepted.
//
// Any other key, a value Argo CD would not accept, a line that is not a p
// line of five fields with an allow or deny effect or a g line of two, a
// pattern that does not compile, and a resource pattern that matches no
// resource Argo CD has are each an *Error naming the key and line (all of
// them, joined); nothing is skipped.
//
// # The policy
//
// Every Enforcer loads Argo CD's built-in policy first (BuiltinPolicy:
// role:readonly gets everything, role:admin does everything and inherits
// role:readonly, the local user admin is role:admin), then
// argocd-rbac-cm's lines, into casbin with Argo CD's model: a line matches
// a request when the subject is, or through g lines inherits, the line's
// subject and the resource, action and object match its patterns.
//
// Resources are applications, applicationsets, logs, exec, projects,
// clusters, repositories (and Argo CD's write-repositories, certificates,
// accounts, gpgkeys, extensions). Actions are get, create, update, delete,
// sync, override, rollback, action/<group>/<kind>/<name> (ResourceAction),
// and update/... or delete/... naming one managed resource of an app
// (ResourceSubAction). The object
// of applications, applicationsets, logs and exec is "<project>/<app>", or
// "<project>/<namespace>/<app>" for an app outside the control plane's
// namespace (AppObject, AppSetObject); of projects, the project's name;
// of the others, their name, or "<project>/<name>" when project-scoped.
//
// # An application's resources
//
// DecideResource decides updating or deleting one resource of an app as
// Argo CD 3 does: "applications, delete/<group>/<kind>/<namespace>/<name>"
// (or update/...) on the app's object, which update or delete on the app
// itself do not grant. EnforcerOptions.ResourceInheritance restores Argo
// CD 2's inheritance, as argocd-cm's
// server.rbac.disableApplicationFineGrainedRBACInheritance "false" does
// (InheritanceFromArgoCDCM reads that key; absent means Argo CD 3's
// default, no inheritance).
//
// # Project roles
//
// An AppProject's spec.roles become policy (ProjectPolicies): each role
// may get its project, has its own lines, and its groups are bound to
// proj:<project>:<role>. A role's line must name that subject, a resource
// among applications, applicationsets, repositories, clusters, exec and
// logs, and an object in the project, or NewEnforcer refuses it. These
// lines take part only in requests about that project.
//
// # Project tokens
//
// VerifyProjectToken checks a bearer token as Argo CD's API server checks
// a project token ("argocd proj role create-token"): a JWT of issuer
// "argocd" and subject proj:<project>:<role>, signed with HMAC by
// argocd-secret's server.secretkey, not expired, whose entry (its id, or
// the iat of a token without one) the role's jwtTokens list in the
// project as the host has it at that moment: removing the entry revokes
// the token. Its Subject is then decided as the project role.
//
// # A decision
//
// Decide (and Enforce) answer in this order, as Argo CD's API server:
//
//  1. policy.default's role is checked first; what it allows is allowed,
//     whatever denies (Argo CD documents this).
//  2. A project role subject proj:<p>:<r> asking about project p is
//     checked alone; about another known project it is refused.
//  3. Otherwise the subject's name and each of its groups that a g line
//     binds to a role are checked, each on its own (Argo CD ignores a
//     group no g line names, even if p lines name it): a subject is
//     allowed when a line matching it allows and none matching it
//     denies, and the request is allowed when any subject is. So a user
//     in two groups, one allowed and one denied, is allowed
//     (argo-cd#17547). EnforcerOptions.DenyAcrossSubjects is stricter: a
//     deny matching any of them refuses the request.
//
// The Decision names the subject and the line (with its source and line
// number) that decided, for an audit log, and lists every subject
// checked. A refusal's Err is a *DeniedError (ErrPermissionDenied) naming
// the request and, for each subject checked, the line that refused it or
// "no line matched". An Enforcer holds no mutable
// state and is safe for concurrent use; build a new one when the config
// map or the projects change. The package imports the model
// (apis/v1alpha1), casbin, gobwas/glob and golang-jwt, never the engine.
package rbac
