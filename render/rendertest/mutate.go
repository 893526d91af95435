package rendertest

import (
	"fmt"
	"reflect"
	"time"
)

// Mutation is one change of one field of a struct value.
type Mutation struct {
	// Field is the path of the changed field, e.g. "Helm.Parameters[0].Name".
	Field string
	// Value is a copy of the original value with that one field changed.
	Value any
}

// Mutations walks every exported field of v (a struct, not a pointer),
// recursively through structs, pointers (a nil pointer is allocated), slices
// (an element is appended, then each of its fields is changed) and maps (a
// key is added), and returns one Mutation per leaf: strings gain a suffix,
// booleans flip, numbers and durations grow, byte slices grow. Fields of
// types it cannot change (funcs, channels, interfaces) are reported in
// skipped so that a test can assert the list is what it expects.
func Mutations(v any) (muts []Mutation, skipped []string) {
	root := reflect.ValueOf(v)
	var walk func(path string, get func(reflect.Value) reflect.Value, t reflect.Type)
	walk = func(path string, get func(reflect.Value) reflect.Value, t reflect.Type) {
		apply := func(change func(reflect.Value)) {
			cp := deepCopy(root)
			change(get(cp))
			muts = append(muts, Mutation{Field: path, Value: cp.Interface()})
		}
		switch {
		case t == reflect.TypeOf(time.Duration(0)):
			apply(func(f reflect.Value) { f.SetInt(f.Int() + int64(time.Second)) })
			return
		}
		switch t.Kind() {
		case reflect.String:
			apply(func(f reflect.Value) { f.SetString(f.String() + "-changed") })
		case reflect.Bool:
			apply(func(f reflect.Value) { f.SetBool(!f.Bool()) })
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			apply(func(f reflect.Value) { f.SetInt(f.Int() + 1) })
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			apply(func(f reflect.Value) { f.SetUint(f.Uint() + 1) })
		case reflect.Float32, reflect.Float64:
			apply(func(f reflect.Value) { f.SetFloat(f.Float() + 1) })
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				sf := t.Field(i)
				if !sf.IsExported() {
					continue
				}
				i := i
				walk(joinField(path, sf.Name), func(r reflect.Value) reflect.Value { return get(r).Field(i) }, sf.Type)
			}
		case reflect.Pointer:
			elem := t.Elem()
			ensure := func(r reflect.Value) reflect.Value {
				p := get(r)
				if p.IsNil() {
					p.Set(reflect.New(elem))
				}
				return p.Elem()
			}
			if elem.Kind() == reflect.Struct {
				apply(func(f reflect.Value) {
					if f.IsNil() {
						f.Set(reflect.New(elem))
					} else {
						f.Set(reflect.Zero(t))
					}
				})
			}
			walk(path, ensure, elem)
		case reflect.Slice:
			elem := t.Elem()
			if elem.Kind() == reflect.Uint8 {
				apply(func(f reflect.Value) { f.SetBytes(append(append([]byte{}, f.Bytes()...), 'x')) })
				return
			}
			apply(func(f reflect.Value) { f.Set(reflect.Append(f, reflect.Zero(elem))) })
			if elem.Kind() == reflect.Struct || elem.Kind() == reflect.Pointer {
				grow := func(r reflect.Value) reflect.Value {
					s := get(r)
					s.Set(reflect.Append(s, reflect.Zero(elem)))
					return s.Index(s.Len() - 1)
				}
				walk(path+"[n]", grow, elem)
			}
		case reflect.Map:
			apply(func(f reflect.Value) {
				if f.IsNil() {
					f.Set(reflect.MakeMap(t))
				}
				k := reflect.New(t.Key()).Elem()
				if k.Kind() == reflect.String {
					k.SetString(fmt.Sprintf("added-%d", f.Len()))
				}
				val := reflect.New(t.Elem()).Elem()
				if val.Kind() == reflect.String {
					val.SetString("x")
				} else if val.Kind() == reflect.Interface {
					val.Set(reflect.ValueOf("x"))
				}
				f.SetMapIndex(k, val)
			})
		default:
			skipped = append(skipped, path)
		}
	}
	walk("", func(r reflect.Value) reflect.Value { return r }, root.Type())
	return muts, skipped
}

func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// deepCopy returns an addressable deep copy of v (structs, pointers,
// slices and maps are copied; funcs and interfaces are shared).
func deepCopy(v reflect.Value) reflect.Value {
	cp := reflect.New(v.Type()).Elem()
	copyInto(cp, v)
	return cp
}

func copyInto(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		for i := 0; i < src.NumField(); i++ {
			if dst.Field(i).CanSet() {
				copyInto(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		copyInto(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			copyInto(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for _, k := range src.MapKeys() {
			val := reflect.New(src.Type().Elem()).Elem()
			copyInto(val, src.MapIndex(k))
			m.SetMapIndex(k, val)
		}
		dst.Set(m)
	default:
		dst.Set(src)
	}
}
