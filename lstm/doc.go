// Package lstm is the held-job classifier: a stacked unidirectional LSTM over
// one-hot event tensors whose last time step feeds Linear(H,1) and a sigmoid
// giving P(release), trained with mean binary cross-entropy and Adam.
//
// The model follows PyTorch's nn.LSTM exactly: gate order (i, f, g, o),
// weights W_ih (4H×I) and W_hh (4H×H) with two bias vectors per layer, zero
// initial states, and the initialisation U(±1/√H) for the LSTM and U(±1/√in)
// for the linear head. ImportTorch and ExportTorch move a state_dict
// (lstm.weight_ih_l0, ..., fc.weight, fc.bias) between Go and Python as .npz
// files, and the tests check forward outputs and one Adam step against
// committed PyTorch outputs.
//
// Architecture.Cell selects a GRU instead: PyTorch's nn.GRU exactly (gate
// order r, z, n; n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))), saved,
// exported (gru.weight_ih_l0, ...) and imported the same way, and checked
// against committed PyTorch outputs to the same bounds. It runs in plain
// float64 Go loops. Train, Evaluate and Decide take a Network, the
// interface *Model implements, so another network plugs in by giving its
// parameters, probabilities and gradient.
//
// Config.Checkpoint makes a training run survive being killed: the whole
// state is written atomically after every epoch, and a restarted Train
// continues from the last one to the same bits as an uninterrupted run.
//
// Two engines compute the LSTM's gradients. The native engine (the default) is a
// hand-derived backpropagation through time in pure Go that gathers weight
// rows for the non-zero entries of each input row instead of multiplying
// by a dense one-hot matrix. Native32 is the same pass in float32 arithmetic
// with float64 master weights and optimiser state, about twice as fast.
// Config.Reference plugs in another gradient method; package lstm/gorgonia
// builds the same network as a gorgonia.org/gorgonia expression graph and
// differentiates it symbolically, the reference the native engine is tested
// against. It is a package of its own so that this one links no gorgonia.
//
// Inference runs through the same pure-Go forward pass: Predict on one
// sequence, Model.Probabilities on many (batched when the sequences
// have equal lengths), and Predictor, a float32 snapshot of a model that
// computes as PyTorch does in its default dtype, for the fastest batched
// inference.
//
// Training steps, Probabilities, Evaluate and the Predictor use every core
// (Config.Workers bounds training). The batch is cut into shards of a fixed
// size, independent of GOMAXPROCS, and every sum over samples or steps runs
// in one fixed order whatever the split, so results are identical, bit for
// bit, on one core or many. Both precisions share one generic
// implementation of the forward and backward passes.
//
// The dense products, the LSTM cell (activations, cell state, hidden state)
// and the element-wise backward step have AVX2/FMA assembly kernels on
// amd64, and AVX-512 ones where the CPU has it, which compute the same bits
// as the AVX2 ones; elsewhere, or built with the purego tag, plain Go loops
// compute the same values to within a few ulps. The assembly cell evaluates
// σ and tanh through a Padé approximant of exp; where H is not a multiple
// of its vector width, and on amd64 elsewhere, the cell's activations are
// internal/vmath's (assembly there too), and package math's with purego or
// on other architectures. Results are reproducible from the seeds on a given machine; FMA and
// non-FMA machines differ in the last bits, which can change a training
// trajectory.
//
// Decide decides the jobs on hold in HTCondor event logs (eventlog's jobs)
// with a trained model, each at the hold it is in now, from the events
// written up to that hold. A hyperparameter search is a sweep of Train
// runs; examples/heldjobs runs one on any sweep backend.
//
// Deviations from the published held-job project, on purpose: validation
// metrics cover the whole validation set rather than its last batch, early
// stopping restores the weights of the best epoch (highest F1 or lowest loss),
// and the Adam state persists across epochs.
package lstm
