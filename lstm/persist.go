package lstm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/crosscluster/crosscluster/internal/npy"
)

// fileFormat and fileVersion identify the files Save writes.
const (
	fileFormat  = "crosscluster-lstm"
	fileVersion = 1
)

// savedModel is the JSON document of a saved model. Weights are stored in
// PyTorch's layout (the same arrays ExportTorch writes) so that the file is
// readable without this package's internal transposition.
type savedModel struct {
	Format      string               `json:"format"`
	Version     int                  `json:"version"`
	Inputs      int                  `json:"inputs"`
	Hidden      int                  `json:"hidden"`
	Layers      int                  `json:"layers"`
	NewestFirst bool                 `json:"newest_first"`
	Cell        string               `json:"cell,omitempty"` // "gru"; absent for an LSTM
	Weights     map[string][]float64 `json:"weights"`
}

// Save writes m to w as a versioned JSON document holding its architecture
// and its weights under PyTorch's state_dict names. Floats are written with
// the shortest representation that reads back exactly.
func (m *Model) Save(w io.Writer) (err error) {
	defer wrapErr(&err)
	s := savedModel{
		Format: fileFormat, Version: fileVersion,
		Inputs: m.inputs, Hidden: m.hidden, Layers: m.layers, NewestFirst: m.newestFirst,
		Weights: map[string][]float64{},
	}
	if m.cell == GRU {
		s.Cell = GRU.String()
	}
	for _, t := range m.stateDict() {
		s.Weights[t.key] = t.data
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(&s); err != nil {
		return err
	}
	return bw.Flush()
}

// Load reads a model written by Save. A file of another format, another
// version, a truncated file or one whose weights do not fit the declared
// architecture is an error wrapping ErrFormat.
func Load(r io.Reader) (_ *Model, err error) {
	defer wrapErr(&err)
	var s savedModel
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if s.Format != fileFormat {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrFormat, s.Format, fileFormat)
	}
	if s.Version != fileVersion {
		return nil, fmt.Errorf("%w: version %d, this package reads version %d", ErrFormat, s.Version, fileVersion)
	}
	const maxDim = 1 << 16 // refuse absurd sizes before allocating
	if s.Inputs <= 0 || s.Hidden <= 0 || s.Layers <= 0 || s.Inputs > maxDim || s.Hidden > maxDim || s.Layers > 64 {
		return nil, fmt.Errorf("%w: architecture inputs=%d hidden=%d layers=%d", ErrFormat, s.Inputs, s.Hidden, s.Layers)
	}
	a := Architecture{Inputs: s.Inputs, Hidden: s.Hidden, Layers: s.Layers, NewestFirst: s.NewestFirst}
	switch s.Cell {
	case "":
	case GRU.String():
		a.Cell = GRU
	default:
		return nil, fmt.Errorf("%w: cell %q, want %q or none", ErrFormat, s.Cell, GRU.String())
	}
	m, err := fromStateDict(a, func(key string, shape []int) ([]float64, error) {
		v, ok := s.Weights[key]
		if !ok {
			return nil, fmt.Errorf("%w: missing weights %q", ErrFormat, key)
		}
		if len(v) != prod(shape) {
			return nil, fmt.Errorf("%w: weights %q have %d values, want %d", ErrFormat, key, len(v), prod(shape))
		}
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// tensorEntry is one state_dict tensor in PyTorch's layout.
type tensorEntry struct {
	key   string
	shape []int
	data  []float64
}

// stateDict returns m's weights as PyTorch's nn.LSTM (module "lstm") or
// nn.GRU (module "gru") and nn.Linear (module "fc") name and lay them out.
func (m *Model) stateDict() []tensorEntry {
	H4 := 4 * m.hidden
	var out []tensorEntry
	for l, lp := range m.gruLayersIf() {
		H3 := 3 * m.hidden
		out = append(out,
			tensorEntry{fmt.Sprintf("gru.weight_ih_l%d", l), []int{H3, lp.in}, slices.Clone(lp.wih)},
			tensorEntry{fmt.Sprintf("gru.weight_hh_l%d", l), []int{H3, m.hidden}, slices.Clone(lp.whh)},
			tensorEntry{fmt.Sprintf("gru.bias_ih_l%d", l), []int{H3}, slices.Clone(lp.bih)},
			tensorEntry{fmt.Sprintf("gru.bias_hh_l%d", l), []int{H3}, slices.Clone(lp.bhh)},
		)
	}
	for l, lp := range m.lay {
		out = append(out,
			tensorEntry{fmt.Sprintf("lstm.weight_ih_l%d", l), []int{H4, lp.in}, transpose(lp.wih, lp.in, H4)},
			tensorEntry{fmt.Sprintf("lstm.weight_hh_l%d", l), []int{H4, m.hidden}, transpose(lp.whh, m.hidden, H4)},
			tensorEntry{fmt.Sprintf("lstm.bias_ih_l%d", l), []int{H4}, slices.Clone(lp.bih)},
			tensorEntry{fmt.Sprintf("lstm.bias_hh_l%d", l), []int{H4}, slices.Clone(lp.bhh)},
		)
	}
	return append(out,
		tensorEntry{"fc.weight", []int{1, m.hidden}, slices.Clone(m.fcW)},
		tensorEntry{"fc.bias", []int{1}, slices.Clone(m.fcB)},
	)
}

// fromStateDict builds a model of architecture a, fetching every tensor in
// PyTorch's layout through get, which checks the shape. NaN or infinite
// weights are refused.
func fromStateDict(a Architecture, get func(key string, shape []int) ([]float64, error)) (*Model, error) {
	// Fetch and check every tensor before allocating the model, so that a
	// file declaring huge dimensions fails on its missing data instead of
	// allocating for them.
	G, mod := a.Cell.gates()*a.Hidden, a.Cell.String()
	type item struct {
		key   string
		shape []int
		data  []float64
	}
	var items []item
	in := a.Inputs
	for l := range a.Layers {
		items = append(items,
			item{key: fmt.Sprintf("%s.weight_ih_l%d", mod, l), shape: []int{G, in}},
			item{key: fmt.Sprintf("%s.weight_hh_l%d", mod, l), shape: []int{G, a.Hidden}},
			item{key: fmt.Sprintf("%s.bias_ih_l%d", mod, l), shape: []int{G}},
			item{key: fmt.Sprintf("%s.bias_hh_l%d", mod, l), shape: []int{G}},
		)
		in = a.Hidden
	}
	items = append(items, item{key: "fc.weight", shape: []int{1, a.Hidden}}, item{key: "fc.bias", shape: []int{1}})
	for i := range items {
		v, err := get(items[i].key, items[i].shape)
		if err != nil {
			return nil, err
		}
		for j, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: %q element %d is %v", ErrNaN, items[i].key, j, x)
			}
		}
		items[i].data = v
	}
	m := newModel(a)
	if a.Cell == GRU {
		// PyTorch's layout is the model's: the tensors in order are the
		// parameter vector.
		p := m.params[:0]
		for _, it := range items {
			p = append(p, it.data...)
		}
		return m, nil
	}
	H4 := 4 * a.Hidden
	dst := func(i int) []float64 {
		if l := i / 4; l < m.layers {
			lp := &m.lay[l]
			return [][]float64{lp.wih, lp.whh, lp.bih, lp.bhh}[i%4]
		}
		return [][]float64{m.fcW, m.fcB}[i-4*m.layers]
	}
	for i, it := range items {
		if len(it.shape) == 2 && it.shape[0] == H4 {
			transposeInto(dst(i), it.data, it.shape[0], it.shape[1])
		} else {
			copy(dst(i), it.data)
		}
	}
	return m, nil
}

// transpose returns the c×r transpose of the r×c row-major matrix a.
func transpose(a []float64, r, c int) []float64 {
	out := make([]float64, len(a))
	transposeInto(out, a, r, c)
	return out
}

// legacyNewestFirstKey is the array that archives written by earlier
// versions of ExportTorch carried for a newest-first model; ImportTorch
// still honours it.
const legacyNewestFirstKey = "newest_first"

// ExportTorch writes m's weights to w as an .npz archive of float32 arrays
// named as the state_dict of
//
//	class Net(nn.Module):
//	    def __init__(self, I, H, L):
//	        super().__init__()
//	        self.lstm = nn.LSTM(I, H, L, batch_first=True)
//	        self.fc = nn.Linear(H, 1)
//
// (for a GRU, self.gru = nn.GRU(I, H, L, batch_first=True))
// and nothing else, so that Python loads it strictly:
//
//	net.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(f).items()}, strict=True)
//
// With double set, arrays are float64 (for a model.double()).
//
// The row order is not part of a state_dict. A model that reads its rows
// newest first (Architecture.NewestFirst) must be given, in PyTorch, its
// inputs with the time axis flipped, as this model reads them; the caller
// keeps that fact beside the file (examples/heldjobs writes it into
// model_torch.json):
//
//	p = torch.sigmoid(net(torch.flip(x, [1]) if newest_first else x))
//
// lstm/testdata/gen_export_order.py does exactly that, and every decision
// it makes at 0.5 equals Model.Predict's (TestExportTorchKeepsOrder).
func (m *Model) ExportTorch(w io.Writer, double bool) (err error) {
	defer wrapErr(&err)
	z := npy.NewZipWriter(w, false)
	for _, t := range m.stateDict() {
		var data any = t.data
		if !double {
			f := make([]float32, len(t.data))
			for i, v := range t.data {
				f[i] = float32(v)
			}
			data = f
		}
		if err := z.Add(t.key, t.shape, data); err != nil {
			return err
		}
	}
	return z.Close()
}

// ImportTorch reads an .npz archive of a PyTorch state_dict with the keys
// ExportTorch writes (float32 or float64) and returns the model: a GRU when
// the keys are gru.* rather than lstm.*. The number of layers is the number
// of consecutive lstm.weight_ih_l<k> (gru.weight_ih_l<k>) keys; the input
// width and hidden size come from the shapes. A missing or misshaped tensor
// is an error wrapping ErrStateDict and naming the key; an unreadable
// archive or tensor is an error wrapping ErrFormat. Keys outside the model's are ignored,
// except that an lstm.* key of a layer beyond the counted ones (as left by
// a missing lstm.weight_ih_l<k>), or of a bidirectional or projected LSTM,
// is an ErrStateDict error naming it.
// Rows are taken as oldest first (Architecture.NewestFirst false), as
// PyTorch's module reads them, unless the archive holds newest_first = [1]
// beside the state_dict (as this package's exports once did). Save and
// Load keep the row order.
func ImportTorch(r io.ReaderAt, size int64) (_ *Model, err error) {
	defer wrapErr(&err)
	ar, err := npy.OpenArchive(r, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	keys := map[string]bool{}
	for _, k := range ar.Keys() {
		keys[k] = true
	}
	read := func(key string) (*npy.Array, []float64, error) {
		if !keys[key] {
			return nil, nil, fmt.Errorf("%w: missing %q", ErrStateDict, key)
		}
		a, err := ar.Array(key)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %w", ErrFormat, key, err)
		}
		v, err := a.Float64()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %w", ErrFormat, key, err)
		}
		return a, v, nil
	}
	mod := LSTM
	if keys["gru.weight_ih_l0"] && !keys["lstm.weight_ih_l0"] {
		mod = GRU
	}
	wih0, _, err := read(mod.String() + ".weight_ih_l0")
	if err != nil {
		return nil, err
	}
	whh0, _, err := read(mod.String() + ".weight_hh_l0")
	if err != nil {
		return nil, err
	}
	if len(wih0.Shape) != 2 || len(whh0.Shape) != 2 || whh0.Shape[1] <= 0 || wih0.Shape[1] <= 0 {
		return nil, fmt.Errorf("%w: %[2]s.weight_ih_l0 shape %[3]v and %[2]s.weight_hh_l0 shape %[4]v are not matrices", ErrStateDict, mod, wih0.Shape, whh0.Shape)
	}
	a := Architecture{Inputs: wih0.Shape[1], Hidden: whh0.Shape[1], Cell: mod}
	for keys[fmt.Sprintf("%s.weight_ih_l%d", mod, a.Layers)] {
		a.Layers++
	}
	const maxDim = 1 << 16
	if a.Inputs > maxDim || a.Hidden > maxDim || a.Layers > 64 {
		return nil, fmt.Errorf("%w: implausible sizes inputs=%d hidden=%d layers=%d", ErrStateDict, a.Inputs, a.Hidden, a.Layers)
	}
	// Every lstm.* key must belong to the layers counted above: a layer
	// whose weight_ih is missing would otherwise cut the model short
	// silently, and keys such as lstm.weight_hr_l0 (proj_size) or
	// lstm.weight_ih_l0_reverse (bidirectional) describe another model.
	want := map[string]bool{}
	for l := range a.Layers {
		for _, name := range []string{"weight_ih", "weight_hh", "bias_ih", "bias_hh"} {
			want[fmt.Sprintf("%s.%s_l%d", mod, name, l)] = true
		}
	}
	for _, k := range ar.Keys() {
		if strings.HasPrefix(k, mod.String()+".") && !want[k] {
			return nil, fmt.Errorf("%w: unexpected %q for a %d-layer unidirectional %s (a missing %s.weight_ih_l%d?)", ErrStateDict, k, a.Layers, strings.ToUpper(mod.String()), mod, a.Layers)
		}
	}
	if keys[legacyNewestFirstKey] {
		_, v, err := read(legacyNewestFirstKey)
		if err != nil {
			return nil, err
		}
		a.NewestFirst = len(v) == 1 && v[0] != 0
	}
	return fromStateDict(a, func(key string, shape []int) ([]float64, error) {
		arr, v, err := read(key)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(arr.Shape, shape) {
			return nil, fmt.Errorf("%w: %q has shape %v, want %v", ErrStateDict, key, arr.Shape, shape)
		}
		return v, nil
	})
}
