// Builds the plugin as the console loads it: a module-federation remote
// entry (plugin-entry.js), its plugin-manifest.json and the exposed modules,
// into dist/. ConsoleRemotePlugin (the SDK's webpack plugin) reads
// package.json's consolePlugin and console-extensions.json, and shares the
// modules the console provides (React, the SDK, react-router, ...) instead
// of bundling them.
const fs = require('fs');
const path = require('path');
const { Compilation, sources } = require('webpack');
const { ConsoleRemotePlugin } = require('@openshift-console/dynamic-plugin-sdk-webpack');

// Locales copies locales/<lng>/<namespace>.json into the build, where the
// console's backend fetches a plugin's locale for its i18n namespace
// (plugin__<name>), as the console plugin template's CopyWebpackPlugin
// does, without that dependency.
class Locales {
  apply(compiler) {
    const dir = path.resolve(__dirname, 'locales');
    compiler.hooks.thisCompilation.tap('Locales', (compilation) => {
      compilation.hooks.processAssets.tap(
        { name: 'Locales', stage: Compilation.PROCESS_ASSETS_STAGE_ADDITIONAL },
        () => {
          for (const lng of fs.readdirSync(dir)) {
            for (const file of fs.readdirSync(path.join(dir, lng))) {
              const src = path.join(dir, lng, file);
              compilation.fileDependencies.add(src);
              compilation.emitAsset(`locales/${lng}/${file}`, new sources.RawSource(fs.readFileSync(src)));
            }
          }
        },
      );
    });
  }
}

const production = process.env.NODE_ENV === 'production';

module.exports = {
  mode: production ? 'production' : 'development',
  context: path.resolve(__dirname, 'src'),
  entry: {},
  output: {
    path: path.resolve(__dirname, 'dist'),
    filename: production ? '[name]-bundle-[contenthash].min.js' : '[name]-bundle.js',
    chunkFilename: production ? '[name]-chunk-[chunkhash].min.js' : '[name]-chunk.js',
  },
  resolve: { extensions: ['.ts', '.tsx', '.js', '.jsx'] },
  module: {
    rules: [
      {
        test: /\.(jsx?|tsx?)$/,
        exclude: /node_modules/,
        use: [{ loader: 'ts-loader', options: { configFile: path.resolve(__dirname, 'tsconfig.json') } }],
      },
    ],
  },
  plugins: [new ConsoleRemotePlugin(), new Locales()],
  devtool: production ? false : 'source-map',
  optimization: { chunkIds: production ? 'deterministic' : 'named', minimize: production },
};
