package cache

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// grantRestricted lets the restricted user list and watch ConfigMaps but
// only list Secrets, cluster-wide, and nothing else.
func grantRestricted(t *testing.T) {
	t.Helper()
	cs, _ := clients(t, cluster.Config())
	ctx := testCtx(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "cache-test-restricted"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cache-test-restricted"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: restrictedUser}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func TestRestrictedUserSkipsForbiddenKinds(t *testing.T) {
	grantRestricted(t)
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(testCtx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "visible"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := cluster.UserConfig(restrictedUser)
	if err != nil {
		t.Fatal(err)
	}
	secrets := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	configMaps := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	pods := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

	t.Run("access review", func(t *testing.T) {
		c := startCache(t, cfg, nil)
		if _, ok := c.Get(cmKey(ns, "visible")); !ok {
			t.Error("allowed kind not cached")
		}
		skipped := c.Skipped()
		for _, gvk := range []schema.GroupVersionKind{secrets, pods} {
			err, ok := skipped[gvk]
			var ke *KindError
			if !ok || !errors.As(err, &ke) || ke.Reason != ReasonForbidden {
				t.Errorf("%v not skipped as forbidden: %v", gvk, err)
			}
		}
		if _, ok := skipped[configMaps]; ok {
			t.Error("ConfigMaps skipped though allowed")
		}
		if _, ok := c.Tainted()[secrets]; !ok {
			t.Error("skipped kind missing from Tainted")
		}
	})

	t.Run("by trying", func(t *testing.T) {
		c := startCache(t, cfg, func(o *cacheSetup) {
			o.RespectRBAC = false
			o.Filter.Include = []GroupKindMatch{{Kind: "ConfigMap"}, {Kind: "Pod"}}
		})
		if _, ok := c.Get(cmKey(ns, "visible")); !ok {
			t.Error("allowed kind not cached")
		}
		err, ok := c.Tainted()[pods]
		if !ok || !apierrors.IsForbidden(err) {
			t.Errorf("Pods not tainted as forbidden: %v", err)
		}
		if len(c.Skipped()) != 0 {
			t.Errorf("kinds skipped without access reviews: %v", c.Skipped())
		}
	})
}
