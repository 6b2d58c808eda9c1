import { useEffect, useRef, useState } from 'react';
import type { EChartsCoreOption } from 'echarts/core';

type EChartsModule = typeof import('./echarts');

let library: Promise<EChartsModule> | null = null;
/**
 * The library's chunk, fetched once. A page that will plot what it is still reading calls this when it starts reading:
 * the chunk then loads and compiles while the data arrives, not after it (on the along-the-line page that was most of
 * the time between the last page read and the plot drawn).
 */
export function loadECharts(): Promise<EChartsModule> {
  return (library ??= import('./echarts').catch((err: unknown) => {
    library = null; // a failed fetch is tried again by the next chart
    throw err;
  }));
}

/**
 * One ECharts chart in a box that follows its container's width. The library is fetched the first time a chart is
 * drawn or loadECharts is called (its own chunk), so pages without charts do not carry it. The box is an image to assistive technology, named
 * by `label`; the numbers behind it are in a table next to it.
 */
export function EChart({ option, label, height, className }: { option: EChartsCoreOption; label: string; height: number; className?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<EChartsModule['echarts']['init']> | null>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | null = null;
    loadECharts().then(
      ({ echarts }) => {
        if (disposed || !box.current) return;
        chart.current = echarts.init(box.current, null, { renderer: 'canvas' });
        // A Performance mark each time the chart is fully drawn (large series are drawn over several frames), named by
        // the chart's label: what `npm run bench:console` times the along-the-line plot by.
        const drawn = box.current;
        chart.current.on('finished', () => {
          performance.mark('linepack:chart-drawn', { detail: drawn.getAttribute('aria-label') });
        });
        chart.current.setOption(option);
        observer = new ResizeObserver(() => chart.current?.resize());
        observer.observe(box.current);
      },
      (err: unknown) => setFailed(String(err)),
    );
    return () => {
      disposed = true;
      observer?.disconnect();
      chart.current?.dispose();
      chart.current = null;
    };
    // The chart is made once; option changes are applied by the effect below.
  }, []);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  if (failed) return <p className="status status-muted">The chart could not be drawn ({failed}).</p>;
  return <div ref={box} role="img" aria-label={label} className={className ?? 'echart'} style={{ height }} />;
}
