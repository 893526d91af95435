package health

import (
	"encoding/json"
	"testing"
)

func TestPrecedence(t *testing.T) {
	order := []Code{Healthy, Suspended, Progressing, Missing, Degraded, Unknown}
	for i, a := range order {
		for j, b := range order {
			if got := IsWorse(a, b); got != (j > i) {
				t.Errorf("IsWorse(%s, %s) = %v", a, b, got)
			}
		}
	}
	if !IsWorse(Degraded, "Bogus") || IsWorse("Bogus", Unknown) {
		t.Error("an unrecognised code must rank as Unknown")
	}
	if Worst() != Healthy || Worst(Progressing, Suspended, Healthy) != Progressing || Worst(Missing, Degraded) != Degraded {
		t.Error("Worst")
	}
}

func TestStatusJSONIsArgoShaped(t *testing.T) {
	data, err := json.Marshal(Status{Code: Degraded, Message: "m"})
	if err != nil || string(data) != `{"status":"Degraded","message":"m"}` {
		t.Fatalf("%s %v", data, err)
	}
	if s := (Status{Code: Healthy}).String(); s != "Healthy" {
		t.Fatal(s)
	}
}
