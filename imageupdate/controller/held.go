package controller

import (
	"encoding/json"
	"fmt"
	"github.com/kubegitops/gitops/apis/v1alpha1"

	"github.com/kubegitops/gitops/imageupdate"
)

// heldOverride is the JSON form of the override an app's state record
// holds (state.AppState.ImageOverride, which the engine and the state
// stores keep opaque). Its keys are the ones records have carried since
// the override was first kept (the Go names of imageupdate.Override's
// fields), so a record an earlier release wrote, in a ConfigMap or any
// other store, still loads.
type heldOverride struct {
	KustomizeImages []string    `json:"KustomizeImages"`
	HelmParameters  []heldParam `json:"HelmParameters"`
}

// heldParam is the JSON form of one imageupdate.HelmParameter.
type heldParam struct {
	Name        string `json:"Name"`
	Value       string `json:"Value"`
	ForceString bool   `json:"ForceString"`
}

// encodeHeld writes ov as a state record holds it.
func encodeHeld(ov imageupdate.Override) (json.RawMessage, error) {
	h := heldOverride{KustomizeImages: ov.KustomizeImages}
	for _, p := range ov.HelmParameters {
		h.HelmParameters = append(h.HelmParameters, heldParam(p))
	}
	return json.Marshal(h)
}

// decodeHeld reads the override a state record holds: nil when it holds
// none, an error naming the app when it holds something else.
func decodeHeld(app v1alpha1.AppKey, raw json.RawMessage) (*imageupdate.Override, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var h heldOverride
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("application %s: the image override its state record holds is not one: %w", app, err)
	}
	ov := imageupdate.Override{KustomizeImages: h.KustomizeImages}
	for _, p := range h.HelmParameters {
		ov.HelmParameters = append(ov.HelmParameters, imageupdate.HelmParameter(p))
	}
	return &ov, nil
}
