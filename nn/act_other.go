//go:build !amd64

package nn

var useAVX2 = false

func reluAVX2(x []float32) int         { return 0 }
func reluMaskAVX2(y, d []float32) int  { return 0 }
func addToAVX2(dst, src []float32) int { return 0 }

func adamAVX2(d, g, m, v []float32, k *[7]float32) int { return 0 }
func polyakAVX2(d, s []float32, tau float32) int       { return 0 }

func tanhAVX2(x []float32) int        { return 0 }
func tanhBackAVX2(y, d []float32) int { return 0 }
