package cyc

var e = "e"
