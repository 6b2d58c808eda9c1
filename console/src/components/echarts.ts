/**
 * Apache ECharts, only the parts the console draws with, so the bundle carries those and not the whole library:
 * scatter series on a canvas (the along-the-line plot and the unity plot), line series (readings over time on a time
 * axis), cartesian grids, zoom by slider and by wheel or pinch (the readings' range selector), tooltips, the scrolling
 * legend (it names the categories), the unity plot's diagonal and a reading's limit (markLine). No ARIA module (the
 * chart's box is an image named by its label, with a table of the numbers beside it), no SVG renderer. Loaded on the
 * pages that plot.
 */
import { LineChart, ScatterChart } from 'echarts/charts';
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
  LineChart,
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
