// Package palette holds the line colours koopq's plots share, so that a
// method or variant keeps its colour from one figure to the next.
package palette

import "image/color"

// Colors are the first eight colours of matplotlib's "tab10" cycle (blue,
// orange, green, red, purple, brown, pink, grey), in that order. Callers
// index it modulo its length and must not modify it.
var Colors = []color.RGBA{{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255},
	{148, 103, 189, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}}
