/**
 * Apache ECharts, only the parts the console draws with (scatter plots on a canvas, zoom, tooltips, legends, a
 * reference line), so the bundle carries those and not the whole library. Loaded on the pages that plot.
 */
import { ScatterChart, LineChart } from 'echarts/charts';
import { AriaComponent, DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([ScatterChart, LineChart, GridComponent, DataZoomComponent, TooltipComponent, LegendComponent, MarkLineComponent, AriaComponent, CanvasRenderer]);

export { echarts };
export type { EChartsCoreOption } from 'echarts/core';
