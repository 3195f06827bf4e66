package npy_test

import (
	"bytes"
	"fmt"

	"github.com/crosscluster/crosscluster/internal/npy"
)

func ExampleWrite() {
	var buf bytes.Buffer
	if err := npy.Write(&buf, []int{2, 3}, []int16{1, 2, 3, 4, 5, 6}); err != nil {
		fmt.Println(err)
		return
	}
	a, err := npy.Read(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := a.Float64()
	fmt.Println(a.Shape, a.DType, x)
	// Output: [2 3] <i2 [1 2 3 4 5 6]
}

func ExampleOpenArchive() {
	var buf bytes.Buffer
	z := npy.NewZipWriter(&buf, true)
	z.Add("z_b", []int{3}, []float64{0.5, 1.5, 2.5})
	z.Add("steps", []int{3}, []int64{10, 20, 30})
	if err := z.Close(); err != nil {
		fmt.Println(err)
		return
	}
	a, err := npy.OpenArchive(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Keys())
	arr, _ := a.Array("steps")
	steps, _ := arr.Int64()
	fmt.Println(steps)
	_, err = a.Array("omega_b")
	fmt.Println(err)
	// Output:
	// [z_b steps]
	// [10 20 30]
	// npy: key "omega_b": no such key
}
