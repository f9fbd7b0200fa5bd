package rereplicate

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// WriteChart draws GB/s per interval as a PNG line chart titled title,
// with a dashed line at boundGBps labelled boundLabel (none when 0).
func WriteChart(path, title string, samples []float64, interval time.Duration, boundGBps float64, boundLabel string) error {
	const w, h, margin = 800, 400, 40
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	bg, axis, line, bound := color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255}, color.RGBA{30, 90, 200, 255}, color.RGBA{200, 60, 60, 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, bg)
		}
	}
	top := boundGBps
	for _, s := range samples {
		top = max(top, s)
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.1
	px := func(i int) int {
		if len(samples) <= 1 {
			return margin
		}
		return margin + i*(w-2*margin)/(len(samples)-1)
	}
	py := func(v float64) int { return h - margin - int(v/top*float64(h-2*margin)) }
	for x := margin; x < w-margin; x++ {
		img.Set(x, h-margin, axis)
	}
	for y := margin; y < h-margin; y++ {
		img.Set(margin, y, axis)
	}
	dashed := func(v float64, c color.Color) {
		for x := margin; x < w-margin; x++ {
			if (x/6)%2 == 0 {
				img.Set(x, py(v), c)
			}
		}
	}
	if boundGBps > 0 {
		dashed(boundGBps, bound)
	}
	for i := 1; i < len(samples); i++ {
		drawLine(img, px(i-1), py(samples[i-1]), px(i), py(samples[i]), line)
	}
	text := func(x, y int, c color.Color, s string) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	text(margin, margin-15, axis, title)
	text(4, margin+4, axis, fmt.Sprintf("%.2f", top))
	text(4, h-margin+4, axis, "0")
	secs := interval.Seconds() * float64(max(len(samples)-1, 0))
	text(w-margin-60, h-margin+18, axis, fmt.Sprintf("%.0f s", secs))
	text(margin, h-margin+18, axis, "0 s")
	if boundGBps > 0 {
		text(w-margin-200, py(boundGBps)-4, bound, fmt.Sprintf("%s %.2f GB/s", boundLabel, boundGBps))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func drawLine(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		for t := -1; t <= 1; t++ {
			img.Set(x0, y0+t, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
