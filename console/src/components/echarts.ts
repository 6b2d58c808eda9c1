/**
 * Apache ECharts, only the parts the console draws with, so the bundle carries those and not the whole library:
 * scatter series on a canvas (the along-the-line plot and the unity plot), cartesian grids, zoom by slider and by
 * wheel or pinch, tooltips, the scrolling legend (it names the categories) and the unity plot's diagonal (markLine).
 * No line series, no ARIA module (the chart's box is an image named by its label, with a table of the numbers beside
 * it), no SVG renderer. Loaded on the pages that plot.
 */
import { ScatterChart } from 'echarts/charts';
import {
  DataZoomInsideComponent,
  DataZoomSliderComponent,
  GridComponent,
  LegendScrollComponent,
  MarkLineComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  ScatterChart,
  GridComponent,
  DataZoomInsideComponent,
  DataZoomSliderComponent,
  TooltipComponent,
  LegendScrollComponent,
  MarkLineComponent,
  CanvasRenderer,
]);

export { echarts };
export type { EChartsCoreOption } from 'echarts/core';
