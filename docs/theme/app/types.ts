import type { CommonTemplateOptions } from '@myst-theme/common';
export type TemplateOptions = CommonTemplateOptions & {
  hide_search?: boolean;
  hide_title_block?: boolean;
};
