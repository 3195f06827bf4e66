package heldjobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/crosscluster/crosscluster/lstm"
)

// A model directory holds what a decision needs besides the weights: the
// tensor shape, the framing and the threshold.
const (
	ModelInfoFile  = "heldjobs-model.json"
	ModelFile      = "model.json"      // lstm.Save
	TorchModelFile = "model_torch.npz" // lstm.ExportTorch, for PyTorch users: the state_dict alone
	// TorchFramingFile, beside TorchModelFile, says what a state_dict
	// cannot: the module (lstm or gru) and whether the rows are read
	// newest first (flip the time axis in PyTorch).
	TorchFramingFile = "model_torch.json"
	modelFormat      = "crosscluster-heldjobs-model"
	// Version 2: samples and decisions draw their context jobs by one
	// causal rule and seed (issue 19 item 1); a version 1 model was trained
	// on context drawn otherwise.
	modelVersion = 2
)

// ErrModelDir is wrapped by the errors about a model directory that is
// missing, damaged, of another version, or inconsistent.
var ErrModelDir = errors.New("held-job model directory")

// ModelInfo is a model directory's description (heldjobs-model.json).
type ModelInfo struct {
	Format       string  `json:"format"`
	Version      int     `json:"version"`
	Shape        string  `json:"shape"`
	J            int     `json:"j"`
	M            int     `json:"m"`
	FrameSeconds float64 `json:"frame_seconds"`
	E            int     `json:"e"`
	Forward      bool    `json:"forward"`
	Threshold    float64 `json:"threshold"`
	Seed         uint64  `json:"seed"` // seeds the choice of context jobs
	// Where the model came from.
	RunID     string  `json:"run_id,omitempty"`
	Slug      string  `json:"slug,omitempty"`
	Dataset   string  `json:"dataset,omitempty"`
	Metric    Metric  `json:"metric,omitempty"`
	Value     float64 `json:"value"`
	BestEpoch int     `json:"best_epoch,omitempty"`
}

// Shape returns the tensor shape the model reads.
func (i ModelInfo) shape() Shape {
	return Shape{J: i.J, M: i.M, Frame: time.Duration(i.FrameSeconds * float64(time.Second))}
}

// SaveModel writes m and info into dir (model.json, model_torch.npz, then
// heldjobs-model.json last, so that a directory whose info file exists is
// complete) and returns the bytes written. Format and Version are set.
func SaveModel(dir string, m *lstm.Model, info ModelInfo) (int64, error) {
	info.Format, info.Version = modelFormat, modelVersion
	if math.IsNaN(info.Value) || math.IsInf(info.Value, 0) { // not JSON
		info.Value = 0
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("heldjobs: %w", err)
	}
	var n int64
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return 0, fmt.Errorf("heldjobs: %w", err)
	}
	n += int64(buf.Len())
	if err := writeAtomic(filepath.Join(dir, ModelFile), buf.Bytes()); err != nil {
		return 0, err
	}
	k, err := SaveTorch(dir, m)
	if err != nil {
		return 0, err
	}
	n += k
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("heldjobs: %w", err)
	}
	n += int64(len(b) + 1)
	return n, writeAtomic(filepath.Join(dir, ModelInfoFile), append(b, '\n'))
}

// SaveTorch writes m into dir as PyTorch reads it: TorchModelFile, the
// state_dict that load_state_dict(strict=True) takes, and TorchFramingFile
// beside it ({"module": "lstm", "newest_first": true}). It returns the
// bytes written.
func SaveTorch(dir string, m *lstm.Model) (int64, error) {
	var buf bytes.Buffer
	if err := m.ExportTorch(&buf, false); err != nil {
		return 0, fmt.Errorf("heldjobs: %w", err)
	}
	n := int64(buf.Len())
	if err := writeAtomic(filepath.Join(dir, TorchModelFile), buf.Bytes()); err != nil {
		return 0, err
	}
	a := m.Architecture()
	b, err := json.Marshal(struct {
		Module      string `json:"module"`
		NewestFirst bool   `json:"newest_first"`
	}{a.Cell.String(), a.NewestFirst})
	if err != nil {
		return 0, fmt.Errorf("heldjobs: %w", err)
	}
	return n + int64(len(b)+1), writeAtomic(filepath.Join(dir, TorchFramingFile), append(b, '\n'))
}

// LoadModel reads a model directory SaveModel wrote. A directory without
// heldjobs-model.json, one written by another format or version, a damaged
// model file, or a model whose architecture does not fit the info (inputs
// J×E, row order) is an error wrapping ErrModelDir.
func LoadModel(dir string) (*lstm.Model, ModelInfo, error) {
	var info ModelInfo
	b, err := os.ReadFile(filepath.Join(dir, ModelInfoFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, info, fmt.Errorf("heldjobs: %w: %s is not a held-job model directory (no %s)", ErrModelDir, dir, ModelInfoFile)
		}
		return nil, info, fmt.Errorf("heldjobs: %w: %w", ErrModelDir, err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, info, fmt.Errorf("heldjobs: %w: %s: %v", ErrModelDir, filepath.Join(dir, ModelInfoFile), err)
	}
	if info.Format != modelFormat {
		return nil, info, fmt.Errorf("heldjobs: %w: %s has format %q, want %q", ErrModelDir, filepath.Join(dir, ModelInfoFile), info.Format, modelFormat)
	}
	if info.Version != modelVersion {
		return nil, info, fmt.Errorf("heldjobs: %w: %s is version %d; this program reads version %d (train the model again with this version)",
			ErrModelDir, dir, info.Version, modelVersion)
	}
	if info.J < 1 || info.M < 1 || info.E < 1 || info.J > maxShapeDim || info.M > maxShapeDim || info.E > 1000 ||
		!(info.FrameSeconds >= 1) || float64(info.M)*info.FrameSeconds > maxWindow.Seconds() || !(info.Threshold > 0 && info.Threshold < 1) {
		return nil, info, fmt.Errorf("heldjobs: %w: %s: shape %dx%dx%vs, e=%d, threshold %v out of range", ErrModelDir,
			filepath.Join(dir, ModelInfoFile), info.J, info.M, info.FrameSeconds, info.E, info.Threshold)
	}
	f, err := os.Open(filepath.Join(dir, ModelFile))
	if err != nil {
		return nil, info, fmt.Errorf("heldjobs: %w: %w", ErrModelDir, err)
	}
	defer f.Close()
	m, err := lstm.Load(f)
	if err != nil {
		return nil, info, fmt.Errorf("heldjobs: %w: %s: %w", ErrModelDir, f.Name(), err)
	}
	if a := m.Architecture(); a.Inputs != info.J*info.E || a.NewestFirst == info.Forward {
		return nil, info, fmt.Errorf("heldjobs: %w: %s has %d inputs (newest first %v), but %s says j=%d e=%d forward=%v",
			ErrModelDir, f.Name(), a.Inputs, a.NewestFirst, ModelInfoFile, info.J, info.E, info.Forward)
	}
	return m, info, nil
}
