// The block map (kiln/block_map.h) drawn as a standalone SVG document: the
// one drawing of the map. `kiln inspect --map FILE > map.svg` writes it, the
// C ABI hands it out (kiln_block_map_svg) and the browser page shows it.
#ifndef KILN_BLOCK_MAP_SVG_H_
#define KILN_BLOCK_MAP_SVG_H_

#include <string>
#include <string_view>

#include "kiln/block_map.h"

namespace kiln::map {

// `text` with & < > " ' written as XML character references. `text` is
// base::Escape's output (every label of the map is), which holds no
// character XML 1.0 forbids; nothing else is changed.
[[nodiscard]] std::string XmlEscape(std::string_view text);

// The map as SVG: one rectangle per region (to scale when every region is
// at least a pixel wide at that scale, else in scaled sections, each region
// as wide as the logarithm of its size), a <title> on each naming the region
// and its byte range, a legend listing every region, and for a rejection the
// deciding byte marked with its field and the verdict. `title` is the file
// name, already escaped for a terminal (empty: the drawing names no file).
// Rectangles carry class "region KIND" and data-kind, data-begin,
// data-end; the mark is <g id="mark" data-offset> with a <text
// class="mark-text">.
[[nodiscard]] std::string Svg(const BlockMap& map, std::string_view title);

}  // namespace kiln::map

#endif  // KILN_BLOCK_MAP_SVG_H_
